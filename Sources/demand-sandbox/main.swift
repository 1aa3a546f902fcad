// Runs the demand sandbox in the foreground and prints its base URLs.
// Usage: demand-sandbox [--port P] [--scenario scenario.json]
import DemandSandbox
import Foundation

var configuration = SandboxConfiguration()
var scenario = SandboxScenario()
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--port":
        guard let value = arguments.popFirst(), let port = Int(value), (0...65535).contains(port) else {
            FileHandle.standardError.write(Data("--port needs a number 0…65535\n".utf8)); exit(2)
        }
        configuration.port = port
    case "--scenario":
        guard let path = arguments.popFirst() else { FileHandle.standardError.write(Data("--scenario needs a file\n".utf8)); exit(2) }
        do {
            scenario = try JSONDecoder().decode(SandboxScenario.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
        } catch {
            FileHandle.standardError.write(Data("cannot read scenario \(path): \(error)\n".utf8)); exit(2)
        }
    default:
        FileHandle.standardError.write(Data("usage: demand-sandbox [--port P] [--scenario FILE]\n".utf8)); exit(2)
    }
}
let sandbox = try await DemandSandbox.start(scenario: scenario, configuration: configuration)
print("growthcat  \(sandbox.growthcatBaseURL)")
print("mars       \(sandbox.marsBaseURL)")
print("chartboost \(sandbox.chartboostBaseURL)")
print("appopen    \(sandbox.appOpenBaseURL)")
print("admin      \(sandbox.adminURL)")
fflush(nil)
while true { try await Task.sleep(for: .seconds(3600)) }
