import AdTransport
import CCurl
import CurlShim
import Foundation

// A request's easy-handle options and the URL rule it passes before any of them is set: every option that enforces
// policy (protocols, redirects, TLS verification, size and time limits) must be accepted, or nothing is sent.

extension CurlEngine {
    /// Sets every option; throws ``HTTPClientError/Code/other`` naming the first option libcurl refused.
    func configure(_ transfer: Transfer, _ request: HTTPRequest, target: Target, timeoutNanos: UInt64) throws {
        let easy = transfer.easy
        func check(_ code: CURLcode, _ option: String) throws {
            guard code == CURLE_OK else {
                throw HTTPClientError(
                    .other, "libcurl refused \(option) (CURLcode \(code.rawValue)); the request was not sent")
            }
        }
        let timeoutMs = Int(clamping: (timeoutNanos / 1_000_000) &+ (timeoutNanos % 1_000_000 == 0 ? 0 : 1))
        try check(curlshim_setopt_str(easy, CURLOPT_URL, request.url), "CURLOPT_URL")
        try check(curlshim_setopt_long(easy, CURLOPT_NOSIGNAL, 1), "CURLOPT_NOSIGNAL")
        try check(curlshim_setopt_long(easy, CURLOPT_TIMEOUT_MS, max(1, timeoutMs)), "CURLOPT_TIMEOUT_MS")
        let connectMs = Int(configuration.connectTimeout.nanosecondsClamped / 1_000_000)
        try check(
            curlshim_setopt_long(easy, CURLOPT_CONNECTTIMEOUT_MS, max(1, min(connectMs, max(1, timeoutMs)))),
            "CURLOPT_CONNECTTIMEOUT_MS")
        try check(curlshim_setopt_long(easy, CURLOPT_SSL_VERIFYPEER, 1), "CURLOPT_SSL_VERIFYPEER")
        try check(curlshim_setopt_long(easy, CURLOPT_SSL_VERIFYHOST, 2), "CURLOPT_SSL_VERIFYHOST")
        if let ca = configuration.caCertificatesPath {
            try check(curlshim_setopt_str(easy, CURLOPT_CAINFO, ca), "CURLOPT_CAINFO")
        }
        try check(curlshim_setopt_str(easy, CURLOPT_PROXY, configuration.proxy ?? ""), "CURLOPT_PROXY")
        try check(curlshim_setopt_str(easy, CURLOPT_PROTOCOLS_STR, "http,https"), "CURLOPT_PROTOCOLS_STR")
        // libcurl never follows a redirect itself: `RedirectFollower` does, one transfer per hop, so every hop's URL
        // passes `validate` and the destination rule, and headers and bodies are dropped across origins.
        try check(curlshim_setopt_long(easy, CURLOPT_FOLLOWLOCATION, 0), "CURLOPT_FOLLOWLOCATION")
        try check(curlshim_setopt_str(easy, CURLOPT_ACCEPT_ENCODING, ""), "CURLOPT_ACCEPT_ENCODING")
        try check(
            curlshim_setopt_off(
                easy, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(clamping: max(0, configuration.maxResponseBytes))),
            "CURLOPT_MAXFILESIZE_LARGE")
        try check(
            curlshim_setopt_long(
                easy, CURLOPT_MAXAGE_CONN, Int(configuration.maxIdleConnectionAge.nanosecondsClamped / 1_000_000_000)),
            "CURLOPT_MAXAGE_CONN")
        try check(curlshim_setopt_str(easy, CURLOPT_USERAGENT, configuration.userAgent), "CURLOPT_USERAGENT")
        try check(curlshim_setopt_ptr(easy, CURLOPT_ERRORBUFFER, transfer.errorBuffer), "CURLOPT_ERRORBUFFER")
        try check(curlshim_setopt_write_cb(easy, CURLOPT_WRITEFUNCTION, curlWriteCallback), "CURLOPT_WRITEFUNCTION")
        try check(
            curlshim_setopt_ptr(easy, CURLOPT_WRITEDATA, Unmanaged.passUnretained(transfer).toOpaque()),
            "CURLOPT_WRITEDATA")
        // Headers are collected and capped here as they arrive, in one pass; `curl_easy_nextheader` afterwards
        // walks the whole list on every call (quadratic: 60 000 headers held the engine thread for ~45 s).
        try check(
            curlshim_setopt_write_cb(easy, CURLOPT_HEADERFUNCTION, curlHeaderCallback), "CURLOPT_HEADERFUNCTION")
        try check(
            curlshim_setopt_ptr(easy, CURLOPT_HEADERDATA, Unmanaged.passUnretained(transfer).toOpaque()),
            "CURLOPT_HEADERDATA")

        switch request.method {
        case .get where request.body == nil:
            try check(curlshim_setopt_long(easy, CURLOPT_HTTPGET, 1), "CURLOPT_HTTPGET")
        case .head:
            try check(curlshim_setopt_long(easy, CURLOPT_NOBODY, 1), "CURLOPT_NOBODY")
        case .post:
            break
        default:
            try check(
                curlshim_setopt_str(easy, CURLOPT_CUSTOMREQUEST, request.method.rawValue), "CURLOPT_CUSTOMREQUEST")
        }
        if let body = request.body {
            try check(
                curlshim_setopt_off(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count)),
                "CURLOPT_POSTFIELDSIZE_LARGE")
            // COPYPOSTFIELDS copies the bytes, so the request's buffer need not outlive this call. An empty body has no
            // base address; a one-byte scratch buffer stands in (libcurl copies zero bytes of it).
            var scratch: UInt8 = 0
            let code = body.withUnsafeBytes { raw in
                withUnsafeMutablePointer(to: &scratch) { fallback in
                    curlshim_setopt_ptr(
                        easy, CURLOPT_COPYPOSTFIELDS,
                        UnsafeMutableRawPointer(mutating: raw.baseAddress) ?? UnsafeMutableRawPointer(fallback))
                }
            }
            try check(code, "CURLOPT_COPYPOSTFIELDS")
        } else if request.method == .post {
            try check(curlshim_setopt_off(easy, CURLOPT_POSTFIELDSIZE_LARGE, 0), "CURLOPT_POSTFIELDSIZE_LARGE")
            try check(curlshim_setopt_str(easy, CURLOPT_COPYPOSTFIELDS, ""), "CURLOPT_COPYPOSTFIELDS")
        }

        var list: UnsafeMutablePointer<curl_slist>?
        for field in request.headers {
            list = curl_slist_append(list, "\(field.name): \(field.value)")
        }
        // An empty `Expect:` stops libcurl from waiting up to 1 s for `100 Continue` on large or PUT bodies.
        list = curl_slist_append(list, "Expect:")
        transfer.headerList = list
        try check(curlshim_setopt_ptr(easy, CURLOPT_HTTPHEADER, list), "CURLOPT_HTTPHEADER")
    }

    /// A checked request URL's host, for messages.
    struct Target {
        var host: String
    }

    /// The transport's rule for a request URL (each redirect hop's too): `https` anywhere; plain `http` to loopback,
    /// or anywhere with ``CurlHTTPClient/Configuration/allowInsecureHTTP``; never another scheme, a user name in the
    /// URL, an IP address in an odd form (`2130706433`, `[::ffff:127.0.0.1]`) or a reserved one (`0.0.0.0`). The URL
    /// is parsed by ``URLDestination``, the parser of the destination policy.
    func validate(_ urlString: String) throws -> Target {
        let destination = try TransportRules.destination(urlString, allowInsecureHTTP: configuration.allowInsecureHTTP)
        return Target(host: destination.host)
    }

    /// Whether `host` is loopback (`localhost`, `*.localhost`, `127/8`, `::1`), by the destination policy's parser:
    /// `127.attacker.invalid` is a name, not loopback.
    static func isLoopback(_ host: String) -> Bool {
        URLDestination.classify(host: host) == .loopback
    }
}
