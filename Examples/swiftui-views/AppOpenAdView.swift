// NOT BUILT on these machines (SwiftUI is Apple-only; no target includes this folder): see README.md here.
import AdUIModels
import SwiftUI

/// The app's root: feeds `AppOpenAdModel` the launch and the scene phase, and covers the screen while an ad shows.
struct AppOpenRoot<Content: View>: View {
    let model: AppOpenAdModel
    @ViewBuilder var content: Content
    @Environment(\.scenePhase) private var phase

    var body: some View {
        content
            .task {
                await model.launched()  // the loading screen: counts an open, loads ahead
                await model.manager.waitForLoad()
                await model.showIfAvailable()  // a cold start may show one from the loading screen
                await model.mainContentAppeared()
            }
            .onChange(of: phase) { _, phase in
                let mapped: AppOpenAdModel.ScenePhase =
                    switch phase {
                    case .active: .active
                    case .background: .background
                    default: .inactive
                    }
                Task { await model.scenePhaseChanged(to: mapped) }
            }
            .fullScreenCover(isPresented: .constant(model.isShowing)) {
                AsyncImage(url: model.creative?.assetURL.flatMap { URL(string: $0) }) { image in
                    image.resizable().scaledToFill().task { await model.presented() }
                } placeholder: {
                    ProgressView()
                }
                .overlay(alignment: .topTrailing) {
                    Button("Close", systemImage: "xmark") { Task { await model.dismissed() } }.padding()
                }
            }
    }
}
