import DemandSandbox
import GrowthCatSandbox

extension RunningSandbox {
    /// What the sandbox's GrowthCat routes received (their module's records).
    var growthcatRecords: GrowthCatRoutes.Records {
        routes(GrowthCatRoutes.self)?.records ?? GrowthCatRoutes.Records()
    }
}
