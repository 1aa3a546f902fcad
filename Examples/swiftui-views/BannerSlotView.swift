// NOT BUILT on these machines (SwiftUI is Apple-only; no target includes this folder): see README.md here.
import AdUIModels
import SwiftUI

/// A 320×50 banner slot: draws the current ad of `BannerSlotModel`, which refreshes itself.
struct BannerSlotView: View {
    let model: BannerSlotModel
    @Environment(\.scenePhase) private var phase
    @Environment(\.openURL) private var openURL

    var body: some View {
        ZStack {
            if let creative = model.creative {
                AsyncImage(url: creative.assetURL.flatMap { URL(string: $0) }) { image in
                    image.resizable().scaledToFit()
                        .task(id: creative.id) { await model.drawn() }  // drawn: the impression counts now
                } placeholder: {
                    Color.clear
                }
                .onTapGesture {
                    if let url = creative.clickURL.flatMap({ URL(string: $0) }) { openURL(url) }
                    Task { await model.tapped() }
                }
            }
        }
        .frame(width: 320, height: 50)
        .task {
            await model.start()  // once; later appearances only resume
            await model.resume(.hidden)
        }
        .onDisappear { Task { await model.pause(.hidden) } }
        .onChange(of: phase) { _, phase in
            Task { phase == .background ? await model.pause(.background) : await model.resume(.background) }
        }
    }
}
