import RouteSync
#if canImport(Glibc)
import Glibc
#endif

/// The process environment, read without Foundation; tests give their own variables.
package struct ProcessEnvironment: Sendable {
    private let variables: [String: String]?

    package init(variables: [String: String]? = nil) {
        self.variables = variables
    }

    /// nil when unset or empty: an empty variable is how a shell or a unit unsets a setting.
    package subscript(name: String) -> String? {
        let text: String
        if let variables {
            guard let value = variables[name] else { return nil }
            text = value
        } else {
            guard let value = getenv(name) else { return nil }
            text = String(cString: value)
        }
        return text.isEmpty ? nil : text
    }

    package var home: String { self["HOME"] ?? "/tmp" }
    package var cacheHome: String { self["XDG_CACHE_HOME"] ?? home + "/.cache" }
    package var configHome: String { self["XDG_CONFIG_HOME"] ?? home + "/.config" }

    /// The config file to read: `--config`, else `CENARIUS_CONFIG`, else
    /// `$XDG_CONFIG_HOME/cenarius/config.json` when it exists; nil when there is none.
    package func configFile(flag: String?) -> String? {
        if let explicit = flag ?? self["CENARIUS_CONFIG"] { return explicit }
        let path = configHome + "/cenarius/config.json"
        return FileSystem.exists(path) ? path : nil
    }
}
