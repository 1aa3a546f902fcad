import AdMediation
import Foundation

// The ads MARS answers with: tiles, images, sponsored stories, and their callbacks.

/// Callback URLs of an ad (already enriched by the client).
public struct MozAdsCallbacks: Sendable, Hashable {
    /// Click URL.
    public var click: String
    /// Impression URL.
    public var impression: String
    /// Report URL, if any.
    public var report: String?
}

/// A tile ad.
public struct MozAdsTile: Sendable, Hashable {
    /// Block key.
    public var blockKey: String
    /// Callbacks.
    public var callbacks: MozAdsCallbacks
    /// Format (`tile`).
    public var format: String
    /// Image URL.
    public var imageUrl: String
    /// Name.
    public var name: String
    /// Destination URL.
    public var url: String
}

/// An image ad.
public struct MozAdsImage: Sendable, Hashable {
    /// Alt text.
    public var altText: String?
    /// Block key.
    public var blockKey: String
    /// Callbacks.
    public var callbacks: MozAdsCallbacks
    /// Format (`billboard`, `skyscraper`, …).
    public var format: String
    /// Image URL.
    public var imageUrl: String
    /// Destination URL.
    public var url: String
}

/// Frequency caps of a spoc.
public struct MozAdsSpocFrequencyCaps: Sendable, Hashable {
    /// Cap key.
    public var capKey: String
    /// Day.
    public var day: UInt32
}

/// Ranking of a spoc.
public struct MozAdsSpocRanking: Sendable, Hashable {
    /// Priority.
    public var priority: UInt32
    /// Personalization model scores (empty when absent).
    public var personalizationModels: [String: UInt32]
    /// Item score.
    public var itemScore: Double
}

/// A sponsored story.
public struct MozAdsSpoc: Sendable, Hashable {
    /// Block key.
    public var blockKey: String
    /// Callbacks.
    public var callbacks: MozAdsCallbacks
    /// Caps.
    public var caps: MozAdsSpocFrequencyCaps
    /// Domain.
    public var domain: String
    /// Excerpt.
    public var excerpt: String
    /// Format (`spoc`).
    public var format: String
    /// Image URL.
    public var imageUrl: String
    /// Ranking.
    public var ranking: MozAdsSpocRanking
    /// Sponsor.
    public var sponsor: String
    /// Sponsor override.
    public var sponsoredByOverride: String?
    /// Title.
    public var title: String
    /// Destination URL.
    public var url: String
}
