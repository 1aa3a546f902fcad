import AdMediation
import AdTransport
import AdapterKit
import BuiltInNetworks
import CurlTransport
import DemandSandbox
import Foundation
import GrowthCatSandbox
import OpenRTBSandbox
import SandboxRouting
import Testing

/// The registry of built-in networks (`BuiltInNetworks`) is what the sandbox serves: one line per network.
@Suite("Sandbox: the registry of built-in networks", .timeLimit(.minutes(2)))
struct RegistryTests {
    @Test func eachBuiltInTypeIsRegisteredOnce() {
        let types = BuiltInNetworks.all.map { $0.factory.type }
        #expect(Set(types).count == types.count, "\(types)")
        #expect(Set(types) == ["growthcat", "mars", "chartboost", "appopen", "openrtb"])
    }

    @Test func aRegisteredRouteModuleIsNamedForItsNetworksType() {
        for entry in BuiltInNetworks.all {
            guard let routes = entry.routes?() else { continue }
            #expect(routes.network == entry.factory.type)
        }
    }

    /// Each entry's sample line is a fixture that works: built by the network's own factory from the sample's
    /// settings, against a sandbox with no scenario, the network fills the sample's placement in its format. The fault
    /// matrix, the fuzzers and `mediate --demo` build the networks from these samples.
    @Test func everySampleLineFillsThroughItsFactoryInASandbox() async throws {
        let entries = BuiltInNetworks.all.filter { $0.sample != nil }
        #expect(Set(entries.map { $0.factory.type }) == ["growthcat", "mars", "chartboost", "appopen"])
        try await withSandbox { sandbox, client in
            for entry in entries {
                let format = try #require(
                    entry.sampleFormat, "\(entry.factory.type): a sample format the factory serves")
                let placement = try #require(entry.sample?.placement)
                let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                    "registry-sample-\(UUID().uuidString)")
                defer { try? FileManager.default.removeItem(at: directory) }
                let built = try entry.makeSample(
                    id: "sample", baseURL: entry.sampleBaseURL(rootURL: sandbox.rootURL),
                    context: AdNetworkFactoryContext(http: client, stateDirectory: directory))
                let ad = try await built.network.load(AdRequest(placement: placement, format: format)).ad
                #expect(ad?.networkID == "sample", "\(entry.factory.type) fills \(placement)")
                #expect(ad?.format == format, "\(entry.factory.type)")
                ad?.invalidate()
                await built.backgroundWork?.shutdown()
            }
        }
    }

    @Test func aSampleWithoutItsSettingsIsRefusedNamingTheNetwork() throws {
        // The settings a sample carries are the ones that reach the network: without them the factory refuses it.
        let chartboost = try #require(BuiltInNetworks.all.first { $0.factory.type == "chartboost" })
        var sample = try #require(chartboost.sample)
        sample.settings = [:]
        let bare = BuiltInNetwork(factory: chartboost.factory, sample: sample)
        #expect {
            try bare.makeSample(
                id: "cb", baseURL: "https://cb.example",
                context: AdNetworkFactoryContext(http: UnusedHTTPClient()))
        } throws: { error in
            (error as? AdError)?.code == .configuration && "\(error)".contains("networks.cb")
        }
    }

    /// Each registered module answers under `/<network>/` in a sandbox started with no route modules configured: a
    /// request it refuses gets the module's own answer (status and body), not the sandbox's "no route".
    @Test func theSandboxMountsEveryRegisteredRouteModule() async throws {
        let modules = BuiltInNetworks.makeRouteModules()
        #expect(modules.count >= 3)
        try await withSandbox { sandbox, client in
            for module in modules {
                let direct = module.respond(
                    to: SandboxRequest(
                        method: "GET", path: "/no/such/route", baseURL: sandbox.moduleBaseURL(module.network),
                        rootURL: sandbox.rootURL, target: "/\(module.network)/no/such/route"))
                guard case .plain(let status, let body) = direct.kind else {
                    Issue.record("\(module.network): a refused request should get a plain answer")
                    continue
                }
                let served = try await client.send(
                    HTTPRequest(url: sandbox.moduleBaseURL(module.network) + "/no/such/route"))
                #expect(served.status == status, "\(module.network)")
                #expect(served.body == (body ?? Data()), "\(module.network)")
            }
        }
    }

    @Test func aTrackingHitThroughAModuleIsRecordedWithItsNetworkAndFullPath() async throws {
        try await withSandbox { sandbox, client in
            let url = sandbox.appOpenBaseURL + "/appopen/v1/track?e=impression&ad=ao_1"
            let response = try await client.send(HTTPRequest(url: url))
            #expect(response.status == 204)
            let hit = try #require(sandbox.records.trackingHits.last)
            #expect(hit.network == "appopen")
            #expect(hit.path == "/appopen/appopen/v1/track")
            #expect(hit.query == ["e": "impression", "ad": "ao_1"])
        }
    }

    /// A module that keeps records is made anew for each sandbox: what one sandbox's bidders received is not
    /// another's.
    @Test func twoSandboxesNeverShareAModulesRecords() async throws {
        try await withSandbox { first, client in
            try await withSandbox { second, _ in
                let notice = first.bidderBaseURL("a") + "/notice/win?bid=b1&price=1.5"
                let status = try await client.send(HTTPRequest(url: notice)).status
                #expect(status == 204)
                #expect(first.routes(OpenRTBRoutes.self)?.records.bidNotices.map(\.bidID) == ["b1"])
                #expect(second.routes(OpenRTBRoutes.self)?.records.bidNotices.isEmpty == true)
            }
        }
    }

    @Test func theAdminRecordsCarryEachModulesOwnAndResetForgetsThem() async throws {
        try await withSandbox { sandbox, client in
            let notice = sandbox.bidderBaseURL("a") + "/notice/loss?bid=b2&price=1&reason=102"
            let status = try await client.send(HTTPRequest(url: notice)).status
            #expect(status == 204)
            let admin = try await client.send(HTTPRequest(url: sandbox.adminURL + "/records"))
            let object = try json(admin)
            let modules = try #require(object["modules"] as? [String: Any])
            let openrtb = try #require(modules["openrtb"] as? [String: Any])
            let notices = try #require(openrtb["bid_notices"] as? [[String: Any]])
            #expect(notices.first?["bid_id"] as? String == "b2")
            _ = try await client.send(HTTPRequest(method: .post, url: sandbox.adminURL + "/reset"))
            #expect(sandbox.routes(OpenRTBRoutes.self)?.records.bidNotices.isEmpty == true)
        }
    }

    /// A module of the configuration named like a built-in network replaces the registry's: GrowthCat's routes with
    /// other API keys.
    @Test func aConfiguredModuleReplacesTheRegistrysOfTheSameName() async throws {
        var configuration = SandboxConfiguration()
        configuration.routeModules = [GrowthCatRoutes(apiKeys: ["gc_other"])]
        try await DemandSandbox.withSandbox(configuration: configuration) { sandbox in
            try await withCurlHTTPClient { client in
                #expect(sandbox.routes(GrowthCatRoutes.self)?.apiKeys == ["gc_other"])
                let url = sandbox.growthcatBaseURL + "/v1/sdk/config"
                let other = try await client.send(HTTPRequest(url: url, headers: ["Authorization": "Bearer gc_other"]))
                #expect(other.status == 200)
                let demo = try await client.send(HTTPRequest(url: url, headers: gcAuth))
                #expect(demo.status == 401)
            }
        }
    }

    /// GrowthCat's records are its module's: under `modules.growthcat` in the admin API, snake_case.
    @Test func growthcatRecordsAreUnderItsModuleInTheAdminRecords() async throws {
        try await withSandbox { sandbox, client in
            let batch = #"{"events":[{"sdk_event_id":"e1","event_name":"impression"}]}"#
            let sent = try await client.send(post(sandbox.growthcatBaseURL + "/v1/ads/events", batch, headers: gcAuth))
            #expect(sent.status == 202)
            let object = try json(try await client.send(HTTPRequest(url: sandbox.adminURL + "/records")))
            #expect(object["growthcat_events"] == nil)
            let modules = try #require(object["modules"] as? [String: Any])
            let growthcat = try #require(modules["growthcat"] as? [String: Any])
            let events = try #require(growthcat["events"] as? [[String: Any]])
            #expect(events.first?["sdk_event_id"] as? String == "e1")
            #expect(growthcat["batches"] as? Int == 1)
            _ = try await client.send(HTTPRequest(method: .post, url: sandbox.adminURL + "/reset"))
            #expect(sandbox.growthcatRecords.events.isEmpty)
        }
    }
}

/// A client for a network that must never be built: any request is an error.
private struct UnusedHTTPClient: HTTPClient {
    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        throw HTTPClientError(.other, "not used")
    }
}
