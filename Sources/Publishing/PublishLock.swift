#if canImport(Glibc)
import Glibc
#endif
package import RouteSync

/// One writer at a time per destination. Two publishes that overlap (two CI jobs, a slow network)
/// would otherwise each read the channel's head, and the slower one would write its older release
/// over the newer head devices had installed: the head would go back. Every command that writes a
/// release (publish, promote, rollback, halt, resume, prune) holds this lock from before it reads
/// what the destination holds until its last write, so the second one waits and then builds on the
/// first one's release. How each destination holds it: `FolderDestination+Lock`, `S3Destination+Lock`.
package protocol PublishLock: Sendable {
    /// Throws when the lock was lost (a store's lease taken over by another publisher); cheap, called after every write.
    func renew() throws(CenariusError)
    /// Throws when the lock is no longer this holder's, asking the destination now: before the
    /// writes that name a release (the layout, the head). A lock taken in one step cannot be lost.
    func confirm() throws(CenariusError)
    /// Gives it up. Never throws: a lock left behind expires (a store's lease) or dies with the process (a folder's).
    func release()
}

extension PublishLock {
    package func confirm() throws(CenariusError) { try renew() }
}

/// Who holds a lock: what its file or object says, and what a waiting publisher prints.
package struct LockHolder: Sendable, Equatable {
    package static let key = ".cenarius-publish.lock"
    static let format = "cenarius-publish-lock-1"

    /// Random per acquisition: tells this holder from another process on another machine with the same pid.
    package var token: String
    package var host: String
    package var pid: Int32
    /// Unix seconds after which a store's lock is taken as abandoned (a publisher killed while holding it).
    package var until: Double

    package static func mine(lease: Double) -> LockHolder {
        var generator = SystemRandomNumberGenerator()
        let token = (0..<4).map { _ in String(generator.next() as UInt32, radix: 16) }.joined(separator: "-")
        return LockHolder(token: token, host: thisHost, pid: getpid(), until: FileSystem.now() + lease)
    }

    /// This machine's name, as a lock it takes says.
    static var thisHost: String {
        var name = [CChar](repeating: 0, count: 256)
        return gethostname(&name, name.count - 1) == 0 ? String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : "?"
    }

    package func serialized() -> [UInt8] {
        Array("\(Self.format)\ntoken \(token)\nhost \(host)\npid \(pid)\nuntil \(Int64(until))\n".utf8)
    }

    /// nil when the bytes are not a lock this version writes (then it is treated as held until it expires by age).
    package static func parse(_ bytes: [UInt8]) -> LockHolder? {
        let lines = String(decoding: bytes.prefix(4096), as: UTF8.self).split(separator: "\n")
        guard lines.first == Substring(format) else { return nil }
        var fields: [Substring: Substring] = [:]
        for line in lines.dropFirst() {
            guard let space = line.firstIndex(of: " ") else { continue }
            fields[line[..<space]] = line[line.index(after: space)...]
        }
        guard let token = fields["token"], let host = fields["host"], let pid = fields["pid"].flatMap({ Int32($0) }),
              let until = fields["until"].flatMap({ Int64($0) }) else { return nil }
        return LockHolder(token: String(token), host: String(host), pid: pid, until: Double(until))
    }

    /// Whether it was taken on this machine (its pid can then be asked whether it still runs).
    package var isOnThisHost: Bool { host == Self.thisHost }

    /// What a waiting publisher is told.
    package var description: String { "the publish of pid \(pid) on \(host)" }
}

/// How long a store's lock lasts without renewal, and how often a holder renews it: a publisher
/// killed while holding it delays the next one by at most the lease.
package enum LockLease {
    package static let seconds: Double = 30
    package static let renewEvery: Double = 10
}
