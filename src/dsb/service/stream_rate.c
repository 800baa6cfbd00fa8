/* The generator's rate cap after each attempt (include/dsb/stream_net.h,
 * dsb_stream_rate_policy): a pure function of the attempts' outcomes, so that
 * tests/dsb_stream/test_stream_rate.c can check its sequence of caps by hand.
 *
 * The idea is TCP's congestion control (additive increase, multiplicative
 * decrease: Chiu and Jain 1989; Jacobson 1988), with the pass as the unit: an
 * attempt's only congestion signal is the receiver's answer, and a loss costs
 * the whole attempt (it is sent again), not a segment.  That makes probing
 * above the receiver's capacity far dearer than in TCP: a plain sawtooth that
 * climbs back to the rate that failed and halves again can average less than
 * never climbing at all.  With a receiver that takes C and steps of C/8, the
 * passes run at 1/2, 5/8, 3/4 and 7/8 of C, then an attempt at C fails: 4
 * passes in the time of 7.1 at C, 0.56 C on average; the ladder that only
 * falls keeps half the sender's free rate T, more whenever C < 0.89 T (the
 * twenty-first session's shared socket: T = 59, ladder 29.7 Gb/s, C between
 * the two).  So, as CUBIC (Ha, Rhee and Xu 2008) slows its window's growth
 * near the window of its last loss, the cap climbs in steps of up x F to one
 * step below F, the rate that last failed, stays there for `hold` clean
 * passes, and only then tries F; and each RESEND of a cap the policy had chosen
 * doubles that hold (a backoff: the receiver's capacity is below it, so a try
 * costs more than it is likely to gain).  A loss of an attempt that ran free
 * (the usual first one) is taken for a transient (the twenty-first session's
 * 1 % loss on one socket at the run's start), and the climb then ends in the
 * cap's removal: once the cap reaches the rate the sender reached free, a cap
 * no longer holds it back.  (On the H200 box's 8 sockets the twenty-second
 * session found 40 % of free attempts lost, none capped: docs/perf/NOTES-stream.md.)
 * With `pace` the climb's end keeps the cap at that rate instead: the sender's
 * threads then pace their batches (a sleep a batch) rather than burst, which
 * is what the twenty-second session's free losses at average rates that capped
 * attempts passed point to. */
#include <math.h>
#include <string.h>

#include "dsb/stream_net.h"

#define RATE_WAIT_MAX (1u << 20) /* the doubled hold, at most (passes) */

void dsb_stream_rate_policy_default(dsb_stream_rate_policy *p)
{
    p->down = 0.5;
    p->up = 0.125;
    p->hold = 8; /* twenty-fourth session: fewer probes above a receiver's capacity */
    p->pace = 1; /* twenty-fourth session: no free attempts after the first loss */
}

const char *dsb_stream_rate_policy_check(const dsb_stream_rate_policy *p)
{
    if (!(p->down >= DSB_STREAM_RATE_DOWN_MIN && p->down <= DSB_STREAM_RATE_DOWN_MAX))
        return "down: expected a fraction in [0.05, 0.95] (the cap after a resend, of the rate "
               "that failed)";
    if (!(p->up >= 0 && p->up <= DSB_STREAM_RATE_UP_MAX))
        return "up: expected a fraction in [0, 1] (a clean pass's step, of the rate that "
               "failed)";
    if (p->hold > DSB_STREAM_RATE_HOLD_MAX) return "hold: expected 0 .. 1000 passes";
    if (p->pace != 0 && p->pace != 1) return "pace: expected 0 (the cap goes at top) or 1 (it stays)";
    return NULL;
}

void dsb_stream_rate_start(dsb_stream_rate_state *s, double limit_gbps)
{
    memset(s, 0, sizeof *s);
    s->limit = limit_gbps > 0 ? limit_gbps : 0;
    s->cap = s->limit;
}

double dsb_stream_rate_update(const dsb_stream_rate_policy *p, dsb_stream_rate_state *s,
                              int lost, double gbps)
{
    const double ran = s->cap; /* the cap the attempt ran at (0: none) */
    if (!s->own && gbps > s->top) s->top = gbps;
    if (lost) {
        /* F: the cap, or the measured rate where the attempt ran below it (or free) */
        double f = ran > 0 && !(gbps > 0 && gbps < ran) ? ran : gbps;
        if (!(f > 0)) f = DSB_STREAM_RATE_FLOOR;
        if (!s->own) s->wait = p->hold; /* ran free: a transient, perhaps */
        else s->wait = s->wait > RATE_WAIT_MAX / 2 ? RATE_WAIT_MAX : 2 * s->wait;
        s->failed = f;
        s->cap = fmax(DSB_STREAM_RATE_FLOOR, p->down * f);
        s->own = 1;
        s->kept = 0;
        s->held = 0;
        s->decreases++;
        if (!(s->lowest > 0) || s->cap < s->lowest) s->lowest = s->cap;
        return s->cap;
    }
    if (!s->own || !(p->up > 0)) return s->cap;
    if (s->kept) return s->cap; /* paced at top and clean: it stays */
    const double f = s->failed, step = p->up * f, plateau = f - step;
    if (ran >= f) s->wait = p->hold; /* F, or more, passed clean: the backoff is over */
    /* at the plateau also when the steps' sum missed it by a rounding (not a step of 1e-16) */
    if (ran < plateau - 1e-9 * f) {
        s->cap = fmin(ran + step, plateau);
    } else if (ran < f && s->held < s->wait) {
        s->held++;
        return s->cap;
    } else {
        s->cap = ran < f ? f : ran + step;
    }
    s->held = 0;
    s->increases++;
    /* with the user's cap the sender was paced by it already, and `top` is its rate under it:
     * back at the user's cap, as without pace */
    if (p->pace && !(s->limit > 0) && s->top > 0 && s->cap >= s->top) {
        s->cap = s->top; /* paced at the rate seen free, not free */
        s->kept = 1;
        s->wait = p->hold; /* the backoff is over */
        return s->cap;
    }
    if ((s->top > 0 && s->cap >= s->top) || (s->limit > 0 && s->cap >= s->limit)) {
        s->own = 0; /* back at the rate seen free: no cap (or the user's) */
        s->cap = s->limit;
        s->removals++;
        s->wait = p->hold;
    }
    return s->cap;
}
