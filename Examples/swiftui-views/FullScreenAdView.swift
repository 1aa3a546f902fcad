// NOT BUILT on these machines (SwiftUI is Apple-only; no target includes this folder): see README.md here.
import AdUIModels
import SwiftUI

/// An interstitial or rewarded ad: draws what `FullScreenAdModel` publishes and reports the renderer's signals.
struct FullScreenAdView: View {
    let model: FullScreenAdModel

    var body: some View {
        ZStack(alignment: .top) {
            Color.black.ignoresSafeArea()
            AsyncImage(url: model.creative.assetURL.flatMap { URL(string: $0) }) { image in
                image.resizable().scaledToFit()
                    .task { await model.renderBegan() }  // on screen: the impression counts now
                    .onTapGesture { Task { await model.tapped() } }
            } placeholder: {
                ProgressView()
            }
            HStack {
                if let label = model.sponsoredLabel { Text(label).font(.caption).padding(4).background(.thinMaterial) }
                Spacer()
                if model.closeVisible {
                    Button("Close", systemImage: "xmark.circle.fill") { Task { await model.closeTapped() } }
                } else if let countdown = model.countdownText {
                    Text(countdown).monospacedDigit().padding(8).background(.thinMaterial, in: Circle())
                }
            }
            .padding()
            VStack {
                Spacer()
                if case .granted(let reward) = model.reward { Text("You earned \(reward.description)") }
                if let progress = model.progress { ProgressView(value: progress) }
            }
        }
        .onDisappear { model.dismissed() }  // gone without the close button: a dismissal
    }
}
