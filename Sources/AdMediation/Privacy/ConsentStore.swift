import AdPrivacy
import Foundation
import Logging

/// A value as a consent management platform stores it under an IAB key.
public enum ConsentStoreValue: Hashable, Sendable {
    /// A string (`IABTCF_TCString`, `IABGPP_GppSID`, …).
    case string(String)
    /// An integer (`IABTCF_gdprApplies`, `IABTCF_CmpSdkID`, …).
    case number(Int)
    /// Anything else (a date, data, a fractional number, …), named by its type: always ignored.
    case unreadable(String)
}

/// Where the consent management platform keeps the user's choices: a key-value store with the IAB's keys
/// (`ConsentStoreKey`, in AdPrivacy). The app (or its CMP) writes it once; the library reads it on every request.
public protocol ConsentStore: Sendable {
    /// The value stored under `key`, if any.
    func consentValue(forKey key: String) -> ConsentStoreValue?
}

/// A consent store in memory, for tests and for apps that keep consent themselves.
public final class InMemoryConsentStore: ConsentStore {
    private let values: LockedValue<[String: ConsentStoreValue]>

    /// A store holding `values`.
    public init(_ values: [String: ConsentStoreValue] = [:]) {
        self.values = LockedValue(values)
    }

    /// The value stored under `key`, if any.
    public func consentValue(forKey key: String) -> ConsentStoreValue? {
        values.withLock { $0[key] }
    }

    /// Stores `value` under `key` (nil removes it).
    public func set(_ value: ConsentStoreValue?, forKey key: String) {
        values.withLock { $0[key] = value }
    }
}

// @unchecked Sendable: the only stored property is a `UserDefaults`, which Apple documents as thread-safe (its
// Foundation on Linux guards its state with a lock too); the class adds no state of its own.
/// The consent store of Apple platforms (and Foundation on Linux): `UserDefaults`, the standard one or an app
/// group's suite, where CMPs write the IAB keys.
public final class UserDefaultsConsentStore: ConsentStore, @unchecked Sendable {
    private let defaults: UserDefaults

    /// The store over `UserDefaults(suiteName:)`; nil for the standard defaults. Returns nil when the suite cannot
    /// be opened (an invalid name).
    public init?(suiteName: String? = nil) {
        if let suiteName {
            guard let defaults = UserDefaults(suiteName: suiteName) else { return nil }
            self.defaults = defaults
        } else {
            self.defaults = .standard
        }
    }

    /// The value stored under `key`: a string, an integral number (a Boolean reads as 0/1), or
    /// ``ConsentStoreValue/unreadable(_:)``.
    public func consentValue(forKey key: String) -> ConsentStoreValue? {
        guard let object = defaults.object(forKey: key) else { return nil }
        if let text = object as? String { return .string(text) }
        if let number = object as? Int { return .number(number) }
        if let number = object as? NSNumber {
            return Int(exactly: number.doubleValue).map { .number($0) } ?? .unreadable("number \(number)")
        }
        return .unreadable(String(describing: type(of: object)))
    }
}

extension PrivacySignals {
    /// The longest stored string read (a TC string or a GPP string); longer values are ignored.
    public static let maxStoredLength = 65_536

    /// The signals a consent store holds: `IABTCF_gdprApplies`, `IABTCF_TCString`, `IABGPP_HDR_GppString`,
    /// `IABGPP_GppSID` and `IABUSPrivacy_String`. A value that is missing is not set; a value that is malformed (of the
    /// wrong type, too long, a `gdprApplies` other than 0/1) is ignored with a warning naming the key and why (never
    /// the value), and never stops the request. A consent string that does not decode is kept, with the same warning:
    /// the privacy rules read it as the refusal it may carry (fail closed). Each call warns: a ``Mediator`` reading the
    /// store on every request warns once per change of a malformed value instead.
    public init(store: any ConsentStore, logger: Logger = Logger(label: "admediation.privacy")) {
        self.init(store: store, logger: logger, memory: nil)
    }

    /// The signals `store` holds; a malformed value is reported to `logger` only when `memory` has not seen it
    /// (the same value with the same fault) since that key last read well formed. Nil `memory`: every time.
    package init(store: any ConsentStore, logger: Logger, memory: ConsentWarningMemory?) {
        self.init()
        var faulty: Set<String> = []
        func warn(_ key: String, _ value: ConsentStoreValue?, _ why: String, _ message: Logger.Message) {
            faulty.insert(key)
            guard memory?.isNew(key, value: value, why: why) ?? true else { return }
            logger.warning(message, metadata: ["key": "\(key)", "reason": "\(why)"])
        }
        func ignore(_ key: String, _ value: ConsentStoreValue?, _ why: String) {
            warn(key, value, why, "malformed stored consent value ignored")
        }
        func report(_ key: String, _ text: String, _ why: String) {
            warn(key, .string(text), why, "malformed stored consent string kept (read as a refusal)")
        }
        func string(_ key: String) -> String? {
            let value = store.consentValue(forKey: key)
            switch value {
            case .none: return nil
            case .string(let text) where text.utf8.count <= Self.maxStoredLength: return text
            case .string(let text):
                ignore(key, value, "\(text.utf8.count) characters, at most \(Self.maxStoredLength)")
            case .number: ignore(key, value, "a number where a string is expected")
            case .unreadable(let type): ignore(key, value, "a value of type \(type)")
            }
            return nil
        }
        let applies = store.consentValue(forKey: ConsentStoreKey.gdprApplies)
        switch applies {
        case .none: break
        case .number(0), .string("0"): gdprApplies = false
        case .number(1), .string("1"): gdprApplies = true
        default: ignore(ConsentStoreKey.gdprApplies, applies, "not 0 or 1")
        }
        // A consent string that does not decode is kept (and reported): the rules read it as the refusal it may
        // carry (fail closed), where dropping it would read as no signal at all. Decoded through the shared cache.
        if let text = string(ConsentStoreKey.tcString), !text.isEmpty {
            if case .failure(let error) = ConsentDecodeCache.shared.tcf(text) {
                report(ConsentStoreKey.tcString, text, "\(error)")
            }
            tcfConsent = text
        }
        if let text = string(ConsentStoreKey.gppString), !text.isEmpty {
            if case .failure(let error) = ConsentDecodeCache.shared.gpp(text) {
                report(ConsentStoreKey.gppString, text, "\(error)")
            }
            gpp = text
        }
        if let text = string(ConsentStoreKey.gppSectionIDs), !text.isEmpty {
            let parts = text.split(separator: "_", omittingEmptySubsequences: false)
            let ids = parts.compactMap { part in
                Int(part).flatMap { (1...GPPString.maxSectionID).contains($0) ? $0 : nil }
            }
            if ids.count == parts.count, ids.count <= GPPString.maxSections {
                gppSectionIDs = ids
            } else {
                ignore(ConsentStoreKey.gppSectionIDs, .string(text), "not section ids separated by _")
            }
        }
        if let text = string(ConsentStoreKey.usPrivacy), !text.isEmpty {
            if case .failure(let error) = ConsentDecodeCache.shared.usPrivacy(text) {
                report(ConsentStoreKey.usPrivacy, text, "\(error)")
            }
            usPrivacy = text
        }
        // A key read well formed (or absent) forgets its last warning: a later malformation is reported again.
        for key in ConsentWarningMemory.keys where !faulty.contains(key) { memory?.forget(key) }
    }

    /// These signals, with every signal they leave unset taken from `stored` (the request's own values win; COPPA
    /// and under-age hold when either says so).
    public func filling(from stored: PrivacySignals) -> PrivacySignals {
        var merged = self
        merged.gdprApplies = gdprApplies ?? stored.gdprApplies
        merged.tcfConsent = tcfConsent ?? stored.tcfConsent
        merged.usPrivacy = usPrivacy ?? stored.usPrivacy
        if gpp == nil {
            merged.gpp = stored.gpp
            if gppSectionIDs.isEmpty { merged.gppSectionIDs = stored.gppSectionIDs }
        }
        merged.coppa = coppa || stored.coppa
        merged.underAgeOfConsent = underAgeOfConsent || stored.underAgeOfConsent
        merged.appTracking = appTracking ?? stored.appTracking
        merged.limitAdTracking = limitAdTracking || stored.limitAdTracking
        return merged
    }
}

/// Which malformed stored consent values were last reported, per key, so a consent store read on every request warns
/// once per change of a malformed value, not on every read. Keeps a hash of each value and its fault, never the value.
package final class ConsentWarningMemory: Sendable {
    /// The keys ``PrivacySignals/init(store:logger:)`` reads.
    static let keys = [
        ConsentStoreKey.gdprApplies, ConsentStoreKey.tcString, ConsentStoreKey.gppString,
        ConsentStoreKey.gppSectionIDs, ConsentStoreKey.usPrivacy,
    ]

    private let reported = LockedValue<[String: Int]>([:])

    /// An empty memory: the first malformation of each key is reported.
    package init() {}

    /// Whether `value` with fault `why` under `key` differs from what was last reported for `key`; remembers it.
    func isNew(_ key: String, value: ConsentStoreValue?, why: String) -> Bool {
        var hasher = Hasher()
        hasher.combine(value)
        hasher.combine(why)
        let fingerprint = hasher.finalize()
        return reported.withLock { $0.updateValue(fingerprint, forKey: key) != fingerprint }
    }

    /// `key` read well formed or absent: its next malformation is reported.
    func forget(_ key: String) {
        _ = reported.withLock { $0.removeValue(forKey: key) }
    }
}
