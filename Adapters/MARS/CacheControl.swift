import AdMediation
import AdapterSupport
import Foundation

/// `Cache-Control` directives the client reads.
package struct CacheControl {
    package var maxAge: Int64?
    package var noStore = false

    package init(_ header: String?) {
        guard let header else { return }
        for directive in header.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces).lowercased() }) {
            if directive == "no-store" { noStore = true }
            // RFC 9111 delta-seconds: digits only; a value too large for Int64 is "very long" (the TTL rule caps it).
            if directive.hasPrefix("max-age=") {
                let digits = directive.dropFirst("max-age=".count)
                guard !digits.isEmpty, digits.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
                else { continue }
                maxAge = Int64(digits) ?? .max
            }
        }
    }
}
