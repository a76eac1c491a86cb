extension StringProtocol {
    /// Without the spaces and tabs at either end: how a setting's or a `k=v` list's value is read.
    package var trimmingSpaces: SubSequence {
        var text = self[...]
        while text.first == " " || text.first == "\t" { text.removeFirst() }
        while text.last == " " || text.last == "\t" { text.removeLast() }
        return text
    }
}
