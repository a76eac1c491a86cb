#!/usr/bin/env bash
# The package's copyright file (DEP-5) on stdout, for scripts/deb.sh: cenariusd itself, the Swift
# runtime its release build links statically, and every package of Package.resolved (each built
# from .build/checkouts into the binary), with the license its own LICENSE file states.
#   scripts/deb-copyright.sh REPO
set -euo pipefail

die() { echo "deb-copyright.sh: $*" >&2; exit 1; }
repo=${1:?usage: scripts/deb-copyright.sh REPO}
resolved="$repo/Package.resolved"
[ -f "$resolved" ] || die "no $resolved (a build resolves the packages first)"
first=$(git -C "$repo" log --reverse --format=%cd --date=format:%Y 2>/dev/null | sed -n 1p)
last=$(date -u -d "@${SOURCE_DATE_EPOCH:-$(date +%s)}" +%Y)
years=${first:-$last}
[ "$years" = "$last" ] || years="$years-$last"

cat <<EOF
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: cenariusd
Comment: The cenariusd source tree carries no license file, so no license has been
 granted for cenariusd itself beyond what copyright law allows. The binary also
 holds, linked statically, the Swift runtime and the Swift packages listed below.

Files: *
Copyright: $years the cenariusd authors
License: all-rights-reserved

Files: swift-toolchain/usr/lib/swift_static/*
Copyright: Apple Inc. and the Swift project authors
License: Apache-2.0
Comment: The Swift runtime and standard library (--static-swift-stdlib), under the
 Apache License 2.0 with the Runtime Library Exception: a binary that embeds
 them may be redistributed without the attribution Sections 4(a), 4(b) and
 4(d) of the License would otherwise require.
EOF

# "identity" then "location" then "version", once per pin.
awk -F'"' '/"identity"/ { id = $4 } /"location"/ { loc = $4 } /"version"/ { print id, loc, $4 }' "$resolved" |
  while read -r identity location version; do
    checkout="$repo/.build/checkouts/$(basename "$location" .git)"
    license_file=$(find "$checkout" -maxdepth 1 -iname 'LICENSE*' -print -quit)
    [ -n "$license_file" ] || die "$identity has no LICENSE file in $checkout"
    if grep -q 'Apache License' "$license_file" && grep -q 'Version 2.0' "$license_file"; then
      license=Apache-2.0
    else
      die "cannot tell the license of $identity from $license_file: teach scripts/deb-copyright.sh its name"
    fi
    cat <<EOF

Files: .build/checkouts/$identity/*
Copyright: the $identity authors ($location, $version)
License: $license
EOF
  done

cat <<'EOF'

License: all-rights-reserved
 No license accompanies the cenariusd sources. Ask its authors before
 redistributing it.

License: Apache-2.0
 On Debian systems, the full text of the Apache License, Version 2.0, is in
 /usr/share/common-licenses/Apache-2.0.
EOF
