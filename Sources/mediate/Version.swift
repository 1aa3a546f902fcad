/// The version `mediate --version` prints (the project's one version constant for the CLI).
enum MediateVersion {
    /// Semantic version of this build of `mediate`.
    static let current = "0.9.0"
}
