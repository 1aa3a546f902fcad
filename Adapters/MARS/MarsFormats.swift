import AdMediation

// MARS's formats, declared by MARS: the core's set of formats is open (`AdFormat.Kind`), and only this network
// serves these. The names are MARS's wire and configuration names.

extension AdFormat.Kind {
    /// A small native tile (MARS's `tile`).
    public static let tile = AdFormat.Kind(rawValue: "tile")
    /// A sponsored story in a feed (MARS's `spoc`).
    public static let spoc = AdFormat.Kind(rawValue: "spoc")
    /// A display image such as a billboard (MARS's `image`).
    public static let image = AdFormat.Kind(rawValue: "image")
}

extension AdFormat {
    /// A small native tile (MARS's `tile`).
    public static let tile = AdFormat.unsized(.tile)
    /// A sponsored story in a feed (MARS's `spoc`).
    public static let spoc = AdFormat.unsized(.spoc)
    /// A display image such as a billboard (MARS's `image`).
    public static let image = AdFormat.unsized(.image)
}
