import AdTransport
import CCurl
import CurlShim
import Foundation

// A finished transfer's outcome: its response, or libcurl's code mapped onto `HTTPClientError` once.

extension CurlEngine {
    func timeoutError(_ transfer: Transfer) -> HTTPClientError {
        HTTPClientError(
            .timeout,
            "\(transfer.method) to \(transfer.host) did not complete within \(Int(transfer.timeout.milliseconds)) ms")
    }

    /// The finished transfer's response, or its error mapped onto ``HTTPClientError``.
    func complete(_ transfer: Transfer, _ code: CURLcode) -> Result<HTTPResponse, HTTPClientError> {
        let easy = transfer.easy
        guard code == CURLE_OK else { return .failure(mapError(transfer, code)) }
        var status = 0
        _ = curlshim_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
        let headers = HTTPHeaders(transfer.headerFields)
        transfer.headerFields = []
        let body = transfer.body
        transfer.body = Data()
        return .success(HTTPResponse(status: status, headers: headers, body: body))
    }

    private func mapError(_ transfer: Transfer, _ code: CURLcode) -> HTTPClientError {
        let text = transfer.curlMessage.isEmpty ? String(cString: curl_easy_strerror(code)) : transfer.curlMessage
        let message = "\(transfer.method) to \(transfer.host): \(text) (curl \(code.rawValue))"
        switch code {
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY:
            return HTTPClientError(.hostNotFound, message)
        case CURLE_COULDNT_CONNECT:
            var osErrno = 0
            _ = curlshim_getinfo_long(transfer.easy, CURLINFO_OS_ERRNO, &osErrno)
            return HTTPClientError(osErrno == Int(ECONNREFUSED) ? .connectionRefused : .connectFailed, message)
        case CURLE_OPERATION_TIMEDOUT:
            return timeoutError(transfer)
        case CURLE_WRITE_ERROR where transfer.tooLarge, CURLE_FILESIZE_EXCEEDED:
            return HTTPClientError(
                .responseTooLarge,
                "\(transfer.method) to \(transfer.host): response body exceeds \(transfer.maxBytes) bytes")
        case CURLE_WRITE_ERROR where transfer.headersTooLarge:
            return HTTPClientError(
                .responseTooLarge,
                "\(transfer.method) to \(transfer.host): response headers exceed \(transfer.maxHeaderCount) fields or "
                    + "\(transfer.maxHeaderBytes) bytes")
        case CURLE_TOO_MANY_REDIRECTS:
            return HTTPClientError(.tooManyRedirects, message)
        case CURLE_PARTIAL_FILE:
            return HTTPClientError(.truncatedBody, message)
        case CURLE_RECV_ERROR, CURLE_SEND_ERROR:
            return HTTPClientError(.connectionReset, message)
        case CURLE_GOT_NOTHING:
            return HTTPClientError(.emptyResponse, message)
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER,
            CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH,
            CURLE_SSL_INVALIDCERTSTATUS:
            return HTTPClientError(.tls, message)
        case CURLE_URL_MALFORMAT:
            return HTTPClientError(.invalidURL, message)
        case CURLE_UNSUPPORTED_PROTOCOL:
            // Our URLs are checked before libcurl sees them, so after a connection without a redirect this is the
            // server's reply: a status line that is not HTTP/1.x (`HTTP/9.9`, `HTTP/1.1 abc`) — not the app's
            // configuration (issue 31 item 8).
            var port = 0
            var redirects = 0
            _ = curlshim_getinfo_long(transfer.easy, CURLINFO_PRIMARY_PORT, &port)
            _ = curlshim_getinfo_long(transfer.easy, CURLINFO_REDIRECT_COUNT, &redirects)
            if port > 0 && redirects == 0 {
                return HTTPClientError(.invalidResponse, "\(message): the status line is not HTTP")
            }
            return HTTPClientError(.insecureURL, message)
        case CURLE_BAD_CONTENT_ENCODING, CURLE_WEIRD_SERVER_REPLY:
            return HTTPClientError(.invalidResponse, message)
        default:
            return HTTPClientError(.other, message)
        }
    }
}
