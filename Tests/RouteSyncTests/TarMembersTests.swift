import Testing
@testable import RouteSync
@testable import Transport

/// A bundle file read in place: a member's URL names its byte range, the downloader asks for
/// exactly that range, and what the tar does not hold is asked of a path no file system has.
@Suite struct TarMembersTests {
    let members = TarMembers(file: "file:///media/stick/app%20x.cenarius.tar", ranges: [
        "Routes.head": .init(offset: 1536, size: 1803),
        "_cenarius/pack/2e54.pack": .init(offset: 4096, size: 47),
        "_cenarius/f/empty": .init(offset: 5120, size: 0),
    ])

    @Test func aMembersURLNamesItsRangeAndReadsBack() throws {
        let url = try #require(members.url("_cenarius/pack/2e54.pack"))
        #expect(url == "file:///media/stick/app%20x.cenarius.tar#member=4096+47")
        #expect(TarMembers.range(of: url) == .init(offset: 4096, size: 47))
        // The path libcurl opens, and LocalFile checks, is the tar's.
        #expect(LocalFile.localPath(url) == "/media/stick/app x.cenarius.tar")
    }

    @Test(arguments: ["file:///a.tar", "http://h/a.tar#member=1+2", "file:///a.tar#member=1", "file:///a.tar#member=-1+2",
                      "file:///a.tar#member=1+x", "file:///a.tar#other=1+2", "file:///a.tar#member=1+2+3"])
    func anythingElseIsNoRange(_ url: String) {
        #expect(TarMembers.range(of: url) == nil)
    }

    @Test func theRangeAskedIsTheMembersFromWhereTheLastAttemptStopped() {
        #expect(Downloader.range(.init(offset: 4096, size: 47), from: 0) == "4096-4142")
        #expect(Downloader.range(.init(offset: 4096, size: 47), from: 40) == "4136-4142")
        // libcurl has no empty range: one byte is asked, and the transfer keeps none of it.
        #expect(Downloader.range(.init(offset: 5120, size: 0), from: 0) == "5120-5120")
    }

    @Test func aRemoteOverATarAsksForItsMembersOnly() throws {
        var remote = try Remote(members.file)
        remote.isBundle = true
        remote.members = members
        #expect(remote.headURL == "file:///media/stick/app%20x.cenarius.tar#member=1536+1803")
        #expect(remote.objectURL("_cenarius/pack/2e54.pack").hasSuffix("#member=4096+47"))
        #expect(remote.objectURL("_cenarius/z/absent.zst") == "file:///media/stick/app%20x.cenarius.tar/_cenarius/z/absent.zst")
        #expect(TarMembers.range(of: remote.tableURL) == nil)
    }
}
