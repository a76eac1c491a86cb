import Foundation

/// The S3 store the tests of `cenariusd publish` upload to: scripts/object-store, OpenStack Swift
/// with three object servers. One per user of the machine, in a fixed folder, started by the first
/// test that asks and left running: the script reuses a running store, so later test processes and
/// runs wait a fraction of a second instead of the 4 s a start takes.
struct ObjectStore: Sendable {
    let endpoint: String
    let accessKey: String
    let secretKey: String
    let region: String
    /// Anonymous reads of a public bucket's keys: `publicBase/bucket/key` (S3 URLs need a signature).
    let publicBase: String
    /// The same, as the variables the script exports, for `Binary.run(environment:)`.
    let environment: [String: String]

    struct Failure: Error, CustomStringConvertible {
        var command: String
        var status: Int32
        var stderr: String
        var description: String { "scripts/object-store \(command) exited \(status): \(stderr)" }
    }

    /// Its servers are installed (`make test-deps`); the script installs them itself only as root.
    static var available: Bool {
        (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").contains {
            FileManager.default.isExecutableFile(atPath: "\($0)/swift-proxy-server")
        }
    }

    static func shared() async throws -> ObjectStore { try await starter.store() }

    /// Creates bucket `name` (again is fine), readable by anyone; returns its public base.
    func bucket(_ name: String) throws -> String {
        try Self.script("bucket", [name])
        return publicBase + "/" + name
    }

    /// The proxy's access log: a line per request, with the method and the headers a device sends.
    var accessLog: String { Self.directory + "/log/proxy.log" }

    /// SIGKILLs one server: "object1" to "object3", "proxy", "account", "container", "memcache".
    func kill(_ server: String) throws { try Self.script("kill", [server]) }

    /// Starts a killed server again on its port, and returns once it answers.
    func revive(_ server: String) throws { try Self.script("revive", [server]) }

    private static let directory = NSTemporaryDirectory() + "cenarius-object-store-\(getuid())"
    private static let scriptPath = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("scripts/object-store").path
    private static let starter = Starter()

    /// Concurrent first callers share one start; so does a failed one (it would fail again).
    private actor Starter {
        private var starting: Task<ObjectStore, any Error>?

        func store() async throws -> ObjectStore {
            let task = starting ?? Task {
                // Off the cooperative pool: the script takes seconds, and the pool has a thread per core.
                try await withCheckedThrowingContinuation { continuation in
                    DispatchQueue.global().async {
                        continuation.resume(with: Result { try ObjectStore(exports: ObjectStore.script("start", ["--replicas", "3"])) })
                    }
                }
            }
            starting = task
            return try await task.value
        }
    }

    /// From the last line `start` prints: `export NAME=VALUE ...` (no value has a space).
    private init(exports: String) throws {
        let line = exports.split(separator: "\n").last ?? ""
        var variables: [String: String] = [:]
        for word in line.split(separator: " ").dropFirst() {
            guard let equals = word.firstIndex(of: "=") else { continue }
            variables[String(word[..<equals])] = String(word[word.index(after: equals)...])
        }
        guard line.hasPrefix("export "), let endpoint = variables["CENARIUS_S3_ENDPOINT"], let accessKey = variables["AWS_ACCESS_KEY_ID"],
              let secretKey = variables["AWS_SECRET_ACCESS_KEY"], let region = variables["AWS_REGION"],
              let publicBase = variables["CENARIUS_S3_PUBLIC_BASE"]
        else { throw Failure(command: "start", status: 0, stderr: "no exports line in: \(exports)") }
        (self.endpoint, self.accessKey, self.secretKey, self.region, self.publicBase) = (endpoint, accessKey, secretKey, region, publicBase)
        environment = variables
    }

    /// `scripts/object-store COMMAND DIR ARGUMENTS...`; its standard output.
    @discardableResult
    private static func script(_ command: String, _ arguments: [String]) throws -> String {
        let process = Process()
        // bash, not the file itself: a checkout that lost the executable bit still works.
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [scriptPath, command, directory] + arguments
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // The servers it starts keep none of its descriptors, so both reads end when it exits.
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure(command: command, status: process.terminationStatus, stderr: String(decoding: stderr, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
        }
        return String(decoding: stdout, as: UTF8.self)
    }
}
