import AdMediation
import Foundation
import Synchronization

/// A failure to start the server.
public struct ServerError: Error, CustomStringConvertible {
    /// What failed.
    public var description: String
    init(_ description: String) { self.description = description }
}

/// The socket calls that differ between Linux (Glibc) and Apple platforms (Darwin): the server's platform shim.
enum SocketPlatform {
    #if canImport(Glibc)
        static let stream = Int32(SOCK_STREAM.rawValue)
        /// `send` never raises SIGPIPE on a closed connection.
        static let sendFlags = Int32(MSG_NOSIGNAL)
        /// Nothing to do on Linux: `sendFlags` covers it.
        static func ignoreSIGPIPE(_ fd: Int32) {}
    #else
        static let stream = SOCK_STREAM
        static let sendFlags: Int32 = 0
        /// Darwin has no `MSG_NOSIGNAL`: the socket itself is told not to raise SIGPIPE.
        static func ignoreSIGPIPE(_ fd: Int32) {
            var one: Int32 = 1
            setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        }
    #endif

    /// `SO_LINGER` with a zero timeout: closing the socket sends a reset.
    static func resetOnClose(_ fd: Int32) {
        var option = linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
    }
}
