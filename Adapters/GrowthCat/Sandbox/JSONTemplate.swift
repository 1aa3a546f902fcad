import AdapterKit
import Foundation
import SandboxRouting

/// A JSON document rendered once (keys sorted, as the sandbox writes every answer) with holes — marker strings where
/// the serial, the token and a number go — and split into literal pieces, so a request only appends the pieces and
/// its values.
struct JSONTemplate: Sendable {
    /// Marks the serial inside a string.
    static let serialHole = "\u{1}S\u{1}"
    /// Marks the token inside a string.
    static let tokenHole = "\u{1}T\u{1}"
    /// Marks a number: rendered as a string, it is replaced with its quotes.
    static let numberHole = "\u{1}N\u{1}"

    enum Hole: Sendable { case serial, token, number }

    private(set) var pieces: [String] = []
    private(set) var holes: [Hole] = []

    init(rendering object: JSONValue) {
        let data = SandboxReply.encoded(object)
        // The encoder writes U+0001 as \u0001.
        var rest = Substring(String(decoding: data, as: UTF8.self))
        let markers: [(String, Hole)] = [
            (#"\u0001S\u0001"#, .serial), (#"\u0001T\u0001"#, .token), (#""\u0001N\u0001""#, .number),
        ]
        while true {
            let next = markers.compactMap { marker, hole in rest.range(of: marker).map { ($0, hole) } }
                .min { $0.0.lowerBound < $1.0.lowerBound }
            guard let (range, hole) = next else { break }
            pieces.append(String(rest[..<range.lowerBound]))
            holes.append(hole)
            rest = rest[range.upperBound...]
        }
        pieces.append(String(rest))
    }

    /// A number as the encoder writes it: whole values without a fraction (`3`, not `3.0`).
    static func format(_ number: Double) -> String {
        guard number.isFinite else { return "0" }
        if number.rounded() == number, abs(number) < 1e15 { return String(Int64(number)) }
        return "\(number)"
    }

    /// Appends the document with its holes filled. `token` must need no JSON escaping; `number` must be finite.
    func render(serial: Int, token: String, number: Double, into text: inout String) {
        for (index, hole) in holes.enumerated() {
            text += pieces[index]
            switch hole {
            case .serial: text += String(serial)
            case .token: text += token
            case .number: text += Self.format(number)
            }
        }
        text += pieces[holes.count]
    }
}
