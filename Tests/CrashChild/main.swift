// Test helper for the crash-safety test: tracks events through a GrowthCatClient with a durable queue and prints
// the sequence number of each event once trackAdEvent has returned (the event is then on disk). The parent kills
// it with SIGKILL at random moments. Usage: growthcat-crash-child BASE_URL QUEUE_PATH FIRST COUNT
//        growthcat-crash-child BASE_URL QUEUE_PATH flush      (replays the queue and prints "flushed N")
import AdMediation
import CurlTransport
import Foundation
import GrowthCatAds

let arguments = CommandLine.arguments
guard arguments.count >= 4 else {
    FileHandle.standardError.write(
        Data("usage: growthcat-crash-child BASE_URL QUEUE_PATH (FIRST COUNT | flush)\n".utf8))
    exit(2)
}
let http = CurlHTTPClient()
var configuration = GrowthCatClient.Configuration(
    apiKey: "gc_test_demo", baseURL: arguments[1], eventQueuePath: arguments[2])
configuration.batchSize = 7
let client = try GrowthCatClient(configuration: configuration, http: http)
/// Unbuffered: a line printed is a line the parent will read, even if SIGKILL follows at once.
func say(_ text: String) { FileHandle.standardOutput.write(Data((text + "\n").utf8)) }
if arguments[3] == "flush" {
    var total = 0
    while true {
        let report = await client.flushAdEvents()
        total += report.sent
        if report.remaining == 0 { break }
    }
    say("flushed \(total)")
    exit(0)
}
let first = Int(arguments[3]) ?? 0
let count = Int(arguments[4]) ?? 0
guard let ad = try await client.loadAd(placementKey: "video_break") else { exit(3) }
for n in first..<(first + count) {
    let name: GrowthCatAdEventName = n % 5 == 0 ? .impression : .videoProgress
    try await client.trackAdEvent(name, for: ad, placementKey: "video_break", metadata: ["n": String(n)])
    say(String(n))
}
_ = await client.flushAdEvents()
say("done")
