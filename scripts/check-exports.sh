#!/usr/bin/env bash
# The closed library surface: every shared library tenure ships
# (lib/libtenure*.so) exports exactly the functions and objects its public
# headers declare, each declaration in include/tenure/*.h carries
# TN_EXTERN, and libtenure.so itself needs neither libpq nor librdkafka.
#
#   scripts/check-exports.sh            build the dev preset's libraries
#                                       (cmake --preset dev; what `make
#                                       lint` runs), then check build/dev/lib
#   scripts/check-exports.sh LIBDIR     check the libraries in LIBDIR as
#                                       they are (the ctest lint/exports)
#
# Which header belongs to which library is the table below; a header not
# in it belongs to libtenure.  A new library needs a line here.
set -euo pipefail
cd "$(dirname "$0")/.."

header_library() {
    case "$1" in
    fence_pg.h) echo libtenure-pg ;;
    fence_kafka.h | events_kafka.h) echo libtenure-kafka ;;
    *) echo libtenure ;;
    esac
}

libdir=${1:-}
if [ -z "$libdir" ]; then
    cmake --preset dev >/dev/null
    nice -n 5 cmake --build --preset dev -j2 --target tenure tenure_pg tenure_kafka >/dev/null
    libdir=build/dev/lib
fi
[ -d "$libdir" ] || { echo "check-exports: no directory $libdir" >&2; exit 2; }

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0

# Declarations of one header, one per line: "NAME" or "NAME !extern" when
# the declaration lacks TN_EXTERN.  Comments, preprocessor lines, the
# extern "C" wrapper and every brace block (struct and enum bodies) are
# dropped; what is left are statements; typedefs and bare struct/enum
# names declare no symbol.
declarations() {
    perl -0777 -ne '
        s{/\*.*?\*/}{}gs; s{//[^\n]*}{}g;
        s{#ifdef __cplusplus.*?#endif}{}gs;
        s{^[ \t]*#(?:[^\n]*\\\n)*[^\n]*}{}mg;
        1 while s{\{[^{}]*\}}{}gs;
        for my $st (split /;/) {
            $st =~ s/\s+/ /g; $st =~ s/^ //; $st =~ s/ $//;
            next if $st eq "" || $st =~ /^typedef\b/;
            next if $st =~ /^(?:struct|enum|union) \w+$/;
            my $name;
            if ($st =~ /^(.*?)\(/) {
                ($name) = $1 =~ /(\w+)\s*$/;
            } else {
                ($name) = $st =~ /(\w+)\s*(?:\[[^\]]*\])?$/;
            }
            next unless defined $name;
            print $name, ($st =~ /\bTN_EXTERN\b/ ? "" : " !extern"), "\n";
        }' "$1"
}

for h in include/tenure/*.h; do
    base=$(basename "$h")
    lib=$(header_library "$base")
    while read -r name flag; do
        if [ "${flag:-}" = "!extern" ]; then
            echo "check-exports: $base declares $name without TN_EXTERN" >&2
            fail=1
        fi
        echo "$name" >>"$T/$lib.want"
    done < <(declarations "$h")
done

shopt -s nullglob
libs=("$libdir"/libtenure*.so)
[ ${#libs[@]} -gt 0 ] || { echo "check-exports: no libtenure*.so in $libdir" >&2; exit 2; }
for so in "${libs[@]}"; do
    lib=$(basename "$so" .so)
    sort -u "$T/$lib.want" 2>/dev/null >"$T/want" || : >"$T/want"
    # An ASan build adds an ODR indicator (__odr_asan.NAME) beside every
    # exported variable: the sanitizer's, not the library's surface.
    nm -D --defined-only "$so" | awk '{print $NF}' | grep -v '^__odr_asan\.' |
        sort -u >"$T/have"
    extra=$(comm -13 "$T/want" "$T/have")
    missing=$(comm -23 "$T/want" "$T/have")
    if [ -n "$extra" ]; then
        echo "check-exports: $lib.so exports symbols no header declares:" >&2
        sed 's/^/  /' <<<"$extra" >&2
        fail=1
    fi
    if [ -n "$missing" ]; then
        echo "check-exports: $lib.so does not export what its headers declare:" >&2
        sed 's/^/  /' <<<"$missing" >&2
        fail=1
    fi
    echo "check-exports: $lib.so: $(wc -l <"$T/have") symbols"
done
for want in "$T"/*.want; do
    lib=$(basename "$want" .want)
    [ -e "$libdir/$lib.so" ] || { echo "check-exports: no $lib.so in $libdir" >&2; fail=1; }
done

# A program that only takes leases links libtenure alone: no libpq, no
# librdkafka behind it.
needed=$(readelf -d "$libdir/libtenure.so" | awk '/NEEDED/ {print $NF}')
if grep -Eq 'libpq|librdkafka' <<<"$needed"; then
    echo "check-exports: libtenure.so needs $(grep -E 'libpq|librdkafka' <<<"$needed" | tr '\n' ' ')" >&2
    fail=1
fi

[ "$fail" = 0 ] || exit 1
echo "check-exports: every library exports exactly its headers' declarations"
