import AdMediation
import Foundation

/// The format kinds a configuration file may name besides the core's (`AdFormat.Kind.builtIn`):
/// the ones its networks' adapters declare (each factory's `formats`, such as MARS's `tile`). A decoder carries a
/// value of this type in its `userInfo` under `PlacementConfiguration.formatKindsKey`; a placement's `format`
/// that is neither the core's nor declared is refused at its field, naming the known formats.
public protocol DeclaredFormatKinds {
    /// The kinds declared beside the core's.
    var declaredFormatKinds: Set<AdFormat.Kind> { get }
}

extension PlacementConfiguration {
    /// Where a decoder's `userInfo` holds the file's ``DeclaredFormatKinds`` (none there: the core's kinds only).
    public static let formatKindsKey: CodingUserInfoKey? = CodingUserInfoKey(rawValue: "admediation.format_kinds")

    /// The kinds a placement read by `decoder` may name: the core's, in their order, then the declared ones by name.
    static func knownKinds(in decoder: any Decoder) -> [AdFormat.Kind] {
        let declared = formatKindsKey.flatMap { decoder.userInfo[$0] as? any DeclaredFormatKinds }?.declaredFormatKinds
        let extra = (declared ?? []).subtracting(AdFormat.Kind.builtIn).sorted { $0.rawValue < $1.rawValue }
        return AdFormat.Kind.builtIn + extra
    }
}

/// A set of kinds as the declared ones (``MediationConfiguration/decode(json:formats:)``'s).
struct FormatKindSet: DeclaredFormatKinds {
    var declaredFormatKinds: Set<AdFormat.Kind>
}
