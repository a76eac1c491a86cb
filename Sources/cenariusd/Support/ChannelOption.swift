import ArgumentParser
import RouteSync

extension ReleaseHead {
    /// `checkChannel` for a command's `validate()`, where ArgumentParser makes a `ValidationError`
    /// the usage exit (64) with the command's help.
    static func validateChannel(_ name: String, option: String = "--channel") throws(ValidationError) {
        do { try checkChannel(name, option: option) } catch { throw ValidationError(error.message) }
    }
}
