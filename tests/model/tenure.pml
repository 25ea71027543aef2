/* SPDX-License-Identifier: MIT */
/* tenure's fencing argument as a Promela model, checked exhaustively with
 * spin: a lease server with strictly increasing tokens, renew and expiry on
 * a ticking clock, a crash that holds live leases for a full TTL, holders
 * that may stop for any time between deciding to write and writing (the
 * zombie), claim records, and the materializer's check-and-advance fence
 * over one Kafka partition.  Invariants (asserted at the sink):
 *   I1  the sink never admits a token below one it already admitted;
 *   I2  no write of a stale holder is admitted after the new holder's claim
 *       was processed, nor after the new holder began reading state.
 * Planted bugs (negative controls, each must make spin find a violation):
 *   -DBUG_NOFENCE       the sink admits every record (no mark check)
 *   -DBUG_NOCLAIM       holders read state without a claim record
 *   -DBUG_TOKEN_RESET   the token counter is not durable across a crash
 * And a vacuity check: with -DREACH_REJECT spin must find a run in which
 * the sink rejects a data record, so the runs above do contain zombies. */

/* The bounds (override with spin -DNAME=value). */
#ifndef NHOLDERS
#define NHOLDERS 3  /* holder processes */
#endif
#ifndef MAXGRANTS
#define MAXGRANTS 3 /* grants in one run */
#endif
#ifndef TTL
#define TTL 2       /* clock ticks */
#endif
#ifndef MAXT
#define MAXT 5      /* the clock stops here */
#endif
#ifndef WRITES
#define WRITES 1    /* data records per grant */
#endif
#ifndef LOGCAP
#define LOGCAP 2    /* records in flight in the partition */
#endif

/* server (durable state unless a bug says otherwise) */
byte now;     /* monotonic clock, in ticks */
byte counter; /* last token issued */
byte ltok;    /* token of the lease on record, 0 = none */
byte lexp;    /* its expiry (tick) */
byte grants;  /* grants so far; also each grant's ghost number */
bit crashed;  /* the one crash has happened */

/* the partition: token, claim flag, ghost grant number of the writer */
chan log = [LOGCAP] of { byte, bit, byte };

/* sink */
byte hwm; /* the fence's high-water mark */

/* ghosts, for the invariants only */
byte max_admitted;          /* highest token admitted so far */
byte claimed_g;             /* highest grant whose claim was admitted */
byte read_g;                /* highest grant whose holder read state */
bool passed[MAXGRANTS + 1]; /* the claim of grant g was processed */

active proctype Clock()
{
    do
    :: atomic { now < MAXT -> now++ }
    :: else -> break
    od
}

/* A crash and restart of tenured: leases on record that may have been live
 * are held for a full TTL counted from the restart. */
active proctype Crash()
{
    atomic {
        !crashed ->
        crashed = 1;
        if
        :: ltok != 0 && now < lexp -> lexp = now + TTL
        :: else -> skip
        fi;
#ifdef BUG_TOKEN_RESET
        counter = 0
#endif
    }
}

active [NHOLDERS] proctype Holder()
{
    byte mytok;  /* the token of the grant it believes it holds */
    byte myg;    /* ghost number of that grant */
    byte myexp;  /* expiry as the holder counts it */
    byte w;      /* data records written for this grant */
end_idle:
    do
    :: atomic {
           (ltok == 0 || now >= lexp) && grants < MAXGRANTS ->
           counter++;
           grants++;
           ltok = counter;
           lexp = now + TTL;
           mytok = counter;
           myg = grants;
           myexp = lexp
       };
#ifndef BUG_NOCLAIM
       /* claim before read: wait until the materializer passed it */
       log!mytok,1,myg;
       passed[myg];
#endif
       atomic { if :: myg > read_g -> read_g = myg :: else -> skip fi };
       w = 0;
       do
       :: w < WRITES && now < myexp ->
          /* it believes it holds the lease: it may stop right here for
           * any time, then write with its old token */
          log!mytok,0,myg;
          w++
       :: atomic {
              ltok == mytok && now < lexp ->
              lexp = now + TTL;
              myexp = lexp
          }
       :: break
       od
    od
}

active proctype Sink()
{
    byte t;
    bit claim;
    byte g;
end:
    do
    :: log?t,claim,g ->
       atomic {
           if
#ifdef BUG_NOFENCE
           :: true ->
#else
           :: t >= hwm ->
#endif
              assert(t >= max_admitted); /* I1 */
              if :: t > max_admitted -> max_admitted = t :: else -> skip fi;
              if :: t > hwm -> hwm = t :: else -> skip fi;
              if
              :: claim -> if :: g > claimed_g -> claimed_g = g
                             :: else -> skip
                          fi
              :: else -> assert(g >= claimed_g); /* I2, claim */
                         assert(g >= read_g)     /* I2, read */
              fi
           :: else -> /* rejected: below the mark */
#ifdef REACH_REJECT
              assert(claim) /* vacuity check: a zombie write gets here */
#else
              skip
#endif
           fi;
           if :: claim -> passed[g] = true :: else -> skip fi
       }
    od
}
