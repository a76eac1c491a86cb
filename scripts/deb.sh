#!/usr/bin/env bash
# make deb: OUT/cenariusd_<version>_<arch>.deb from the release build, the man pages (make man) and
# dist/, with dpkg-deb and nothing from the network. Native package: its version is the binary's.
#   scripts/deb.sh BINARY MAN_DIR OUT_DIR
# SOURCE_DATE_EPOCH (the Makefile sets it to the last commit's time) dates the changelog and clamps
# every file's time in the archive, so that one source gives one .deb.
set -euo pipefail
umask 022

die() { echo "deb.sh: $*" >&2; exit 1; }
[ $# -eq 3 ] || die "usage: scripts/deb.sh BINARY MAN_DIR OUT_DIR"
bin=$1 man=$2
repo=$(cd "$(dirname "$0")/.." && pwd)
[ -x "$bin" ] || die "no binary at $bin (make release builds it)"
out=$(mkdir -p "$3" && cd "$3" && pwd)
compgen -G "$man/*.1" >/dev/null || die "no man pages in $man (make man writes them)"
for tool in dpkg-deb dpkg-shlibdeps dpkg-architecture readelf strings gzip; do
  command -v "$tool" >/dev/null || die "$tool is missing (make deb-deps installs dpkg-dev and binutils)"
done
: "${SOURCE_DATE_EPOCH:=$(git -C "$repo" log -1 --format=%ct 2>/dev/null || date +%s)}"
export SOURCE_DATE_EPOCH
# Debian's own variables when the builder sets them (dch reads the same), else the maintainers'
# address the project's history is written under.
if [ -n "${DEBFULLNAME:-}" ] && [ -n "${DEBEMAIL:-}" ]; then
  maintainer="$DEBFULLNAME <$DEBEMAIL>"
else
  maintainer="cenariusd maintainers <maintainers@users.noreply.a-seed-7347a12d.example>"
fi

# A Debian version allows [A-Za-z0-9.+~] (no "-": that would make it a Debian revision), and a
# pre-release sorts before its release with "~": 1.2.0-rc.1 becomes 1.2.0~rc.1.
upstream=$("$bin" --version)
version=$(printf '%s' "$upstream" | sed -e 's/-/~/' -e 's/[^A-Za-z0-9.+~]/./g')
[[ $version =~ ^[0-9] ]] || die "'$bin --version' printed '$upstream', which cannot become a Debian version"
arch=$(dpkg --print-architecture)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)

# dpkg-shlibdeps wants the debhelper layout: debian/control beside debian/<package>/.
work="$out/work"
stage="$work/debian/cenariusd"
rm -rf "$work"
mkdir -p "$stage/DEBIAN"
printf 'Source: cenariusd\n\nPackage: cenariusd\nArchitecture: any\n' >"$work/debian/control"

install -D -m 0755 "$bin" "$stage/usr/bin/cenariusd"

# The unit of dist/, for /usr/bin; its leading comments are the steps of a manual install.
unit="$stage/usr/lib/systemd/system/cenariusd.service"
mkdir -p "$(dirname "$unit")"
{
  echo "# systemd unit of the cenariusd package; not enabled on install: systemctl enable --now cenariusd"
  sed -e '1,/^\[Unit\]/{/^#/d}' -e 's|^ExecStart=/usr/local/bin/cenariusd |ExecStart=/usr/bin/cenariusd |' "$repo/dist/cenariusd.service"
} >"$unit"
chmod 0644 "$unit"
for line in 'ExecStart=/usr/bin/cenariusd ' 'Type=notify' 'WatchdogSec=' 'Documentation=man:cenariusd(1)'; do
  grep -q "^$line" "$unit" || die "dist/cenariusd.service no longer has '$line'"
done

for page in "$man"/*.[0-9]; do
  section=${page##*.}
  install -D -m 0644 "$page" "$stage/usr/share/man/man$section/$(basename "$page")"
  gzip -9n "$stage/usr/share/man/man$section/$(basename "$page")"
done

# Completion scripts are sourced, never run: bash's loses the #! line it is printed with.
"$bin" --generate-completion-script bash | sed '1{/^#!/d}' | install -D -m 0644 /dev/stdin "$stage/usr/share/bash-completion/completions/cenariusd"
"$bin" --generate-completion-script zsh | install -D -m 0644 /dev/stdin "$stage/usr/share/zsh/vendor-completions/_cenariusd"
"$bin" --generate-completion-script fish | install -D -m 0644 /dev/stdin "$stage/usr/share/fish/vendor_completions.d/cenariusd.fish"

# JSON has no comments: the conffile is an empty object (every option at its default, the daemon
# serves without syncing until a remote is set); cenarius-config(5) and README.Debian say the rest.
printf '{}\n' | install -D -m 0644 /dev/stdin "$stage/etc/cenarius/config.json"
echo /etc/cenarius/config.json >"$stage/DEBIAN/conffiles"

doc="$stage/usr/share/doc/cenariusd"
install -D -m 0644 "$repo/dist/debian/README.Debian" "$doc/README.Debian"
install -D -m 0644 "$repo/dist/config.example.json" "$doc/examples/config.example.json"
# Offline bundles from a stick (docs/service.md): the service's drop-in, a mount unit and its udev rule.
for file in bundles.conf media-cenarius.mount 99-cenarius-stick.rules; do
  install -D -m 0644 "$repo/dist/bundles/$file" "$doc/examples/bundles/$file"
done
install -D -m 0644 "$repo/dist/debian/lintian-overrides" "$stage/usr/share/lintian/overrides/cenariusd"
bash "$repo/scripts/deb-copyright.sh" "$repo" >"$doc/copyright"
commit=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo "an unknown commit")
{
  echo "cenariusd ($version) unstable; urgency=medium"
  echo
  echo "  * Built from the cenariusd source tree at $commit (make deb)."
  echo
  echo " -- $maintainer  $(date -u -R -d "@$SOURCE_DATE_EPOCH")"
} | gzip -9n >"$doc/changelog.gz"
chmod 0644 "$doc/changelog.gz"

install -m 0755 "$repo/dist/debian/prerm" "$repo/dist/debian/postrm" "$stage/DEBIAN/"

# What the binary links (NEEDED): dpkg-shlibdeps, from the libraries' symbols files.
linked=$(cd "$work" && dpkg-shlibdeps -O -e"debian/cenariusd/usr/bin/cenariusd" 2>"$work/shlibdeps.log") ||
  die "dpkg-shlibdeps failed: $(cat "$work/shlibdeps.log")"
linked=${linked#shlibs:Depends=}
if [ -s "$work/shlibdeps.log" ]; then cat "$work/shlibdeps.log" >&2; fi
# What it loads with dlopen (libcurl, libzstd: Sources/CCurl/include/ccurl.h says why) is in no
# NEEDED entry; its sonames are strings in the binary, and each names the package holding it here.
needed=$(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p')
symbols=$(strings -a "$bin")
loaded=()
for soname in $(grep -xE 'lib[A-Za-z0-9_+.-]+\.so\.[0-9]+' <<<"$symbols" | sort -u); do
  grep -qxF "$soname" <<<"$needed" && continue
  owner=$(dpkg-query -S "*/$multiarch/$soname" 2>/dev/null | sed -n 1p) ||
    die "the binary loads $soname, which no installed package holds (make deps installs the build's libraries)"
  package=${owner%%:*}
  info=/var/lib/dpkg/info/$package:$arch
  [ -e "$info.shlibs" ] || [ -e "$info.symbols" ] || info=/var/lib/dpkg/info/$package
  if [ -e "$info.symbols" ]; then
    # The lowest version that has every function the binary asks dlsym for, as dpkg-shlibdeps
    # would find for a linked library.
    minimum=$(awk -v lib="$soname" 'NR == FNR { wanted[$0] = 1; next }
        /^[^ *|#]/ { inside = ($1 == lib); next }
        inside && /^ / { split($1, name, "@"); if (name[1] in wanted) print $2 }' \
      <(printf '%s\n' "$symbols") "$info.symbols" | sort -V | tail -1)
    [ -n "$minimum" ] || die "none of $soname's symbols in $info.symbols is named in the binary"
    loaded+=("$package (>= $minimum)")
  elif [ -e "$info.shlibs" ]; then
    base=${soname%.so.*} so=${soname##*.so.}
    line=$(awk -v lib="$base" -v so="$so" '$1 == lib && $2 == so { $1 = ""; $2 = ""; sub(/^ +/, ""); print; exit }' "$info.shlibs")
    [ -n "$line" ] || die "$info.shlibs has no entry for $soname"
    loaded+=("$line")
  else
    die "$package has neither a symbols nor a shlibs file: cannot tell which version of it $soname needs"
  fi
done
depends=$linked
for dependency in "${loaded[@]}"; do depends+=", $dependency"; done

installed_size=$(du -sk --exclude=DEBIAN "$stage" | cut -f1)
cat >"$stage/DEBIAN/control" <<EOF
Package: cenariusd
Version: $version
Architecture: $arch
Maintainer: $maintainer
Installed-Size: $installed_size
Depends: $depends
Suggests: avahi-daemon
Section: net
Priority: optional
Description: hot-deploy resource manager for web assets
 cenariusd keeps a device's copy of a web app current: it syncs a remote
 folder described by a route table (Routes.json) into a verified,
 generational cache, answers lookups from the cache, the preset folder the
 app ships with, or a refetch, and serves the files over HTTP on loopback.
 .
 Signed tables, releases on trial that roll back by themselves, staged
 rollouts and fleet reports are built in. The package holds the daemon and
 its commands (cenariusd serve, sync, resolve, routes, seed, fleet, ...), a
 systemd unit that is not enabled on install, man pages and bash, zsh and
 fish completion.
EOF

(cd "$stage" && find . -path ./DEBIAN -prune -o -type f ! -path ./etc/\* -printf '%P\n' | LC_ALL=C sort | xargs -d '\n' md5sum) >"$stage/DEBIAN/md5sums"

deb="$out/cenariusd_${version}_${arch}.deb"
rm -f "$out"/cenariusd_*.deb
dpkg-deb --root-owner-group --build "$stage" "$deb" >/dev/null
echo "built $deb ($(du -h "$deb" | cut -f1); Depends: $depends)"
