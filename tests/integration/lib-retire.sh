#!/usr/bin/env bash
# The names the retirement tests watch (t206 on the embedded store, t614
# on PostgreSQL; --retain-ms, docs/safety/retired-names.md), on either store.
# Source after lib.sh and lib-server.sh, with tenured started.
#   retire_seed        keep:live (a long lease: never retired), ret:a
#                      (released) and ret:b (expires at once); sets
#                      ltok lsec, atok asec, btok bsec
#   retire_answers F   what those names answer once ret:a and ret:b are
#                      retired with the retired floor F: check
#                      current:false with floor F, GET 404, renew 409
#                      lost; keep:live current with its own floor

retire_seed() {
    acquire "keep:live" o 600000
    expect_code 201 "a long lease"
    ltok=$(jget token) lsec=$(jget lease_secret)
    acquire "ret:a" o 60000
    expect_code 201 "a lease to release"
    atok=$(jget token) asec=$(jget lease_secret)
    release "ret:a" "$atok" "$asec"
    expect_code 204 "release ret:a"
    acquire "ret:b" o 100
    expect_code 201 "a lease to expire"
    btok=$(jget token) bsec=$(jget lease_secret)
}

retire_answers() {
    check_token "ret:a" "$atok"
    expect_code 200 "check a retired name"
    expect_field current false "a retired name's old token"
    expect_field floor "$1" "a retired name answers the retired floor"
    check_token "ret:b" "$btok"
    expect_field current false "the expired, retired name"
    expect_field floor "$1" "the expired, retired name's floor"
    get_lease "ret:a"
    expect_code 404 "GET of a retired name"
    renew "ret:b" "$btok" "$bsec"
    expect_error 409 lost "renew of a retired grant"
    check_token "keep:live" "$ltok"
    expect_field current true "a live lease is never retired"
    expect_field floor "$ltok" "a live lease keeps its own floor"
}
