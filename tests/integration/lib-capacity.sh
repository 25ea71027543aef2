#!/usr/bin/env bash
# The capacity limits --max-leases and --max-names, for any store (source
# after lib.sh and lib-server.sh; URL is the server under test):
#   refused LIMIT          tenure_capacity_refused_total{limit=LIMIT} now
#   expect_capacity LIMIT WHAT  the last answer was LIMIT's 503 capacity
#                          refusal, with Retry-After, counted once since
#                          $before
#   capacity_leases        on a server with --max-leases 3 and no lease
#   capacity_names         on a server with --max-names 2, --retain-ms 3000
#                          and no name; leaves cap:n1 held (n1tok, n1sec)
#                          and cap:n3 held

# refused LIMIT: the counter of LIMIT now.
refused() {
    curl -s --max-time 5 "$URL/metrics" |
        awk -v l="tenure_capacity_refused_total{limit=\"$1\"}" '$1 == l {print $2}'
}

# expect_capacity LIMIT WHAT: the last answer was the capacity refusal of
# LIMIT, with Retry-After, and the counter moved from $before.
expect_capacity() {
    expect_error 503 capacity "$2"
    printf '%s\n' "$HDRS" | grep -qi '^Retry-After: [1-9]' ||
        fail "$2: no Retry-After header in: $HDRS"
    jget message | grep -q -- "--max-$(printf '%s' "$1" | tr _ -)" ||
        fail "$2: the message does not name --max-$1: $BODY"
    [ "$(refused "$1")" = $((before + 1)) ] ||
        fail "$2: tenure_capacity_refused_total{limit=\"$1\"} is $(refused "$1"), want $((before + 1))"
}

capacity_leases() {
    # --max-leases 3: three live leases, the fourth grant is refused.
    for i in 1 2 3; do
        acquire "cap:l$i" o 60000
        expect_code 201 "live lease $i"
        eval "tok$i=\$(jget token) sec$i=\$(jget lease_secret)"
    done
    before=$(refused leases)
    acquire "cap:l4" o 60000
    expect_capacity leases "a fourth live lease"
    get_lease "cap:l4"
    expect_code 404 "the refused grant changed nothing"
    # A blocking acquire of a free name is refused the same way, at once.
    before=$(refused leases)
    acquire "cap:l4" o 60000 '"wait_ms":2000'
    expect_capacity leases "a fourth live lease, with wait_ms"
    # What was granted is unaffected: renew, check, a held name's 409.
    renew "cap:l1" "$tok1" "$sec1" 60000
    expect_code 200 "renew at the limit"
    check_token "cap:l2" "$tok2"
    expect_field current true "check at the limit"
    acquire "cap:l2" other 60000
    expect_code 409 "a held name still answers held, not capacity"
    # Released: one below the limit, the grant succeeds.
    release "cap:l3" "$tok3" "$sec3"
    expect_code 204 "release at the limit"
    acquire "cap:l4" o 60000
    expect_code 201 "a grant after the count dropped"
    tok4=$(jget token) sec4=$(jget lease_secret)
    pass "--max-leases: refused with 503 capacity and Retry-After, counted; renew, check, release unaffected; left again after a release"

    # Expiry counts too: a short lease that runs out frees its place.
    release "cap:l4" "$tok4" "$sec4"
    acquire "cap:l5" o 3000
    expect_code 201 "a short lease"
    before=$(refused leases)
    acquire "cap:l6" o 60000
    expect_capacity leases "over the limit while the short lease lives"
    for _ in $(seq 1 200); do
        acquire "cap:l6" o 60000
        [ "$CODE" = 201 ] && break
        expect_error 503 capacity "refused until the short lease expires"
        sleep 0.05
    done
    expect_code 201 "a grant once the short lease expired"
    pass "--max-leases: an expired lease no longer counts"
}

capacity_names() {
    acquire "cap:n1" o 60000
    expect_code 201 "name 1"
    n1tok=$(jget token) n1sec=$(jget lease_secret)
    acquire "cap:n2" o 60000
    expect_code 201 "name 2"
    n2tok=$(jget token) n2sec=$(jget lease_secret)
    before=$(refused names)
    acquire "cap:n3" o 60000
    expect_capacity names "a third name"
    # A name the table holds is granted again at the limit: it is no new name.
    release "cap:n2" "$n2tok" "$n2sec"
    expect_code 204 "release name 2"
    acquire "cap:n2" o 60000
    expect_code 201 "a known name at the names limit"
    n2tok=$(jget token) n2sec=$(jget lease_secret)
    release "cap:n2" "$n2tok" "$n2sec"
    # Once cap:n2 is retired (3 s after its release), a new name fits again.
    for _ in $(seq 1 300); do
        acquire "cap:n3" o 60000
        [ "$CODE" = 201 ] && break
        expect_error 503 capacity "refused until a name is retired"
        sleep 0.05
    done
    expect_code 201 "a new name after a name was retired"
    renew "cap:n1" "$n1tok" "$n1sec"
    expect_code 200 "the first name renews throughout"
    pass "--max-names: refused with 503 capacity, counted; known names still granted; left again after a retirement"
}
