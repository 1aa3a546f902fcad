import AdPrivacy
import Logging

/// The consent strings decoded so far, keyed by the strings themselves (issue 44 item 5): a TC string, a GPP string or
/// a US Privacy string is decoded once when it changes, not for every request and every network — a 22 KB TC string
/// costs tens of milliseconds of CPU. Shared by every request of the process (``shared``), behind one lock held only
/// to look up or insert (decoding runs outside it: two requests that miss at once may both decode, and the first
/// insertion wins). Bounded: at most ``capacity`` strings of each kind, the oldest dropped first; a string longer than
/// its decoder reads is refused by the decoder at once (an error, so it fails closed) and not kept.
///
/// A string that does not decode is logged once, when it enters the cache: a warning naming the field and the error,
/// never the value.
package final class ConsentDecodeCache: Sendable {
    /// The cache every `DecodedPrivacy` reads through.
    package static let shared = ConsentDecodeCache()

    /// The strings of each kind kept.
    package let capacity: Int
    private let logger: Logger
    private let state: LockedValue<State>

    /// A cache keeping `capacity` strings of each kind, logging malformed ones to `logger`.
    package init(capacity: Int = 8, logger: Logger = Logger(label: "admediation.privacy")) {
        self.capacity = max(1, capacity)
        self.logger = logger
        state = LockedValue(State())
    }

    /// The TC string `text`, decoded.
    package func tcf(_ text: String) -> Result<TCFConsent, ConsentStringError> {
        decode(text, field: "tcf", length: TCFConsent.maxLength, at: \.tcf) { text throws(ConsentStringError) in
            try TCFConsent(decoding: text)
        }
    }

    /// The GPP string `text`, decoded (its broken sections logged once each).
    package func gpp(_ text: String) -> Result<GPPString, ConsentStringError> {
        decode(text, field: "gpp", length: GPPString.maxLength, at: \.gpp) { text throws(ConsentStringError) in
            try GPPString(decoding: text)
        }
    }

    /// The US Privacy string `text`, decoded.
    package func usPrivacy(_ text: String) -> Result<USPrivacyString, ConsentStringError> {
        decode(text, field: "us_privacy", length: 64, at: \.usPrivacy) { text throws(ConsentStringError) in
            try USPrivacyString(decoding: text)
        }
    }

    /// The decoders `DecodedPrivacy` reads through: this cache's.
    package var decoders: ConsentStringDecoders {
        ConsentStringDecoders(
            tcf: { [self] in tcf($0) }, gpp: { [self] in gpp($0) }, usPrivacy: { [self] in usPrivacy($0) })
    }

    /// How many strings of each kind are kept now (for tests): TCF, GPP, US Privacy.
    package var counts: (tcf: Int, gpp: Int, usPrivacy: Int) {
        state.withLock { ($0.tcf.values.count, $0.gpp.values.count, $0.usPrivacy.values.count) }
    }

    /// How many times a string was decoded rather than found (for tests).
    package var decodes: Int { state.withLock { $0.decodes } }

    private func decode<Value: Sendable>(
        _ text: String, field: String, length: Int, at path: WritableKeyPath<State, Bounded<Value>> & Sendable,
        _ decoder: (String) throws(ConsentStringError) -> Value
    ) -> Result<Value, ConsentStringError> {
        if let found = state.withLock({ $0[keyPath: path].values[text] }) { return found }
        let result: Result<Value, ConsentStringError>
        do { result = .success(try decoder(text)) } catch { result = .failure(error) }
        // Over-long strings are refused by their decoder before any work and never kept (their key would be large).
        guard text.utf8.count <= length else { return result }
        let capacity = self.capacity
        let inserted = state.withLock { state in
            state.decodes += 1
            return state[keyPath: path].insert(text, result, capacity: capacity)
        }
        if inserted { log(field, result) }
        return result
    }

    private func log<Value>(_ field: String, _ result: Result<Value, ConsentStringError>) {
        switch result {
        case .failure(let error):
            logger.warning(
                "malformed privacy signal", metadata: ["field": "\(field)", "error": "\(error.code): \(error.message)"])
        case .success(let value):
            guard let gpp = value as? GPPString else { return }
            for (id, error) in gpp.sectionErrors.sorted(by: { $0.key < $1.key }) {
                logger.warning(
                    "malformed privacy signal",
                    metadata: ["field": "gpp section \(id)", "error": "\(error.code): \(error.message)"])
            }
        }
    }

    private struct State {
        var tcf = Bounded<TCFConsent>()
        var gpp = Bounded<GPPString>()
        var usPrivacy = Bounded<USPrivacyString>()
        var decodes = 0
    }

    /// Decoded strings of one kind, oldest first.
    private struct Bounded<Value: Sendable>: Sendable {
        var values: [String: Result<Value, ConsentStringError>] = [:]
        var order: [String] = []

        /// Keeps `result` for `text` unless it is already there (then false), dropping the oldest past `capacity`.
        mutating func insert(_ text: String, _ result: Result<Value, ConsentStringError>, capacity: Int) -> Bool {
            guard values[text] == nil else { return false }
            values[text] = result
            order.append(text)
            while order.count > capacity { values[order.removeFirst()] = nil }
            return true
        }
    }
}
