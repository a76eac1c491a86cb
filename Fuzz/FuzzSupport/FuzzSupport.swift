package import RouteSync
#if canImport(Glibc)
import Glibc
#endif

package enum FuzzChecks {
    /// Joined to a root and normalised lexically, an accepted uri never leaves the root.
    package static func staysInside(_ uri: URIPath) {
        var depth = 0
        for segment in uri.value.split(separator: "/", omittingEmptySubsequences: false) {
            switch segment {
            case "", ".", "..": fatalError("accepted uri has an empty, '.' or '..' segment: \(uri.value)")
            default: depth += 1
            }
        }
        if uri.value.hasPrefix("/") || uri.value.contains("\\") || uri.value.utf8.contains(0) || depth == 0 {
            fatalError("accepted uri can escape: \(uri.value)")
        }
    }
}

package enum FuzzReplay {
    /// Runs each file named on the command line (or each file of each folder) through `body`.
    /// Exits 1 on a path that cannot be read, and on no input at all: a corpus that went missing
    /// must fail the replay, not pass it with nothing checked.
    package static func run(_ body: (UnsafePointer<UInt8>, Int) -> Int32) {
        var count = 0
        for argument in CommandLine.arguments.dropFirst() {
            let paths = FileSystem.isDirectory(argument)
                ? FileSystem.listDirectory(argument).sorted().map { argument + "/" + $0 }
                : [argument]
            for path in paths {
                let bytes: [UInt8]
                do { bytes = try FileSystem.readFile(path) } catch {
                    fail("cannot read \(path): \(error.message)")
                }
                let copy = bytes.isEmpty ? [0] : bytes
                _ = copy.withUnsafeBufferPointer { body($0.baseAddress!, bytes.count) }
                count += 1
            }
        }
        guard count > 0 else { fail("no inputs in \(CommandLine.arguments.dropFirst().joined(separator: " ")) (an empty or missing corpus)") }
        print("replayed \(count) inputs")
    }

    private static func fail(_ message: String) -> Never {
        _ = FileSystem.writeAll(2, Array("\(CommandLine.arguments[0]): \(message)\n".utf8))
        exit(1)
    }
}

#if FUZZING
/// SwiftPM links an executable's entry point as `<Module>_main`; under `-DFUZZING` each target
/// defines that symbol and hands control to libFuzzer's driver instead of a Swift `main`.
package enum FuzzDriver {
    public typealias Callback = @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32

    package static func run(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>, _ callback: Callback) -> Int32 {
        var count = argc
        var vector: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = argv
        return llvmFuzzerRunDriver(&count, &vector, callback)
    }
}

@_silgen_name("LLVMFuzzerRunDriver")
func llvmFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<Int32>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: FuzzDriver.Callback) -> Int32
#endif
