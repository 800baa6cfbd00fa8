/* The generator's rate cap (include/dsb/stream_net.h, dsb_stream_rate_update:
 * additive increase, multiplicative decrease, per attempt) as a pure function:
 * hand-written sequences of outcomes (the receiver asked for the attempt again
 * or not, the rate it was sent at) and the caps worked out by hand beside
 * them.  The rates are binary fractions, so that every expected cap is exact. */
#include <math.h>
#include <string.h>

#include "../check.h"
#include "dsb/stream_net.h"

typedef struct {
    int lost;
    double gbps;   /* the attempt's measured rate */
    double cap;    /* the cap expected for the next attempt (0: none) */
    const char *why;
} step;

/* Runs `n` steps from a start at `limit`; checks each cap (to `tol` of it: 0, exactly);
 * returns the state. */
static dsb_stream_rate_state run_tol(const char *name, const dsb_stream_rate_policy *p,
                                     double limit, const step *s, size_t n, double tol)
{
    dsb_stream_rate_state st;
    dsb_stream_rate_start(&st, limit);
    CHECK(st.cap == limit, "%s: the first attempt at the limit (%g)", name, st.cap);
    for (size_t i = 0; i < n; i++) {
        double before = st.cap;
        double got = dsb_stream_rate_update(p, &st, s[i].lost, s[i].gbps);
        CHECK(fabs(got - s[i].cap) <= tol * s[i].cap && st.cap == got,
              "%s, step %zu (%s at %g Gb/s, cap %g): next cap %g, expected %g (%s)", name, i + 1,
              s[i].lost ? "lost" : "clean", s[i].gbps, before, got, s[i].cap, s[i].why);
    }
    return st;
}

static dsb_stream_rate_state run(const char *name, const dsb_stream_rate_policy *p, double limit,
                                 const step *s, size_t n)
{
    return run_tol(name, p, limit, s, n, 0);
}

int main(void)
{
    dsb_stream_rate_policy d;
    dsb_stream_rate_policy_default(&d);
    CHECK(d.down == 0.5 && d.up == 0.125 && d.hold == 8 && d.pace == 1,
          "defaults: down %g, up %g, hold %u, pace %d", d.down, d.up, d.hold, d.pace);
    CHECK(dsb_stream_rate_policy_check(&d) == NULL, "the defaults are valid");
    { /* the defaults: a loss of an attempt that ran free, the climb back, the cap kept */
        static const step s[] = {
            {1, 48, 24, "free, lost at 48: F = 48, cap 24, hold 8"},
            {0, 24, 30, "step 48/8 = 6 toward the plateau 42"},
            {0, 30, 36, "+6"},
            {0, 36, 42, "+6: the plateau"},
            {0, 42, 42, "hold 1 of 8"},
            {0, 42, 42, "hold 2 of 8"},
            {0, 42, 42, "hold 3 of 8"},
            {0, 42, 42, "hold 4 of 8"},
            {0, 42, 42, "hold 5 of 8"},
            {0, 42, 42, "hold 6 of 8"},
            {0, 42, 42, "hold 7 of 8"},
            {0, 42, 42, "hold 8 of 8"},
            {0, 42, 48, "tries F = 48 = top: kept there (pace)"},
            {0, 48, 48, "stays"},
        };
        run("defaults", &d, 0, s, sizeof s / sizeof s[0]);
    }
    { /* the twenty-second session's defaults (hold 2, pace 0): the cap goes at top */
        const dsb_stream_rate_policy old = {0.5, 0.125, 2, 0};
        static const step s[] = {
            {1, 48, 24, "free, lost at 48: F = 48, cap 24, hold 2"},
            {0, 24, 30, "+6"},
            {0, 30, 36, "+6"},
            {0, 36, 42, "+6: the plateau"},
            {0, 42, 42, "hold 1 of 2"},
            {0, 42, 42, "hold 2 of 2"},
            {0, 42, 0, "tries F = 48 = top: the cap goes"},
        };
        run("hold 2, pace 0", &old, 0, s, sizeof s / sizeof s[0]);
    }
    /* most sequences below with a hold of 1 pass (shorter) */
    const dsb_stream_rate_policy h1 = {0.5, 0.125, 1, 0};
    { /* down 1/2, up 1/8, hold 1 */
        static const step s[] = {
            {0, 40, 0, "free and clean: no cap; top 40"},
            {1, 48, 24, "free, lost at 48: top 48, F = 48, cap 48/2; hold 1"},
            {0, 24, 30, "step 48/8 = 6 toward the plateau 48 - 6 = 42"},
            {0, 30, 36, "+6"},
            {0, 36, 42, "+6: at the plateau"},
            {0, 42, 42, "at the plateau: the one pass of hold"},
            {0, 42, 0, "tries F = 48 = top: the cap goes (1st removal)"},
            {1, 50, 25, "free, lost at 50: top 50, F = 50, cap 25, hold 1"},
            {0, 25, 31.25, "step 50/8 = 6.25 (plateau 43.75)"},
            {1, 31.25, 15.625, "lost at the policy's cap: F = 31.25, cap 15.625, hold doubled: 2"},
            {0, 15.625, 19.53125, "step 31.25/8 = 3.90625 (plateau 27.34375)"},
            {0, 19.53125, 23.4375, "+3.90625"},
            {0, 23.4375, 27.34375, "+3.90625: the plateau"},
            {0, 27.34375, 27.34375, "hold 1 of 2"},
            {0, 27.34375, 27.34375, "hold 2 of 2"},
            {0, 27.34375, 31.25, "tries F = 31.25 (below top 50: the cap stays)"},
            {0, 31.25, 35.15625, "F passed clean: hold back to 1; above F by the same steps"},
            {0, 35.15625, 39.0625, "+3.90625"},
            {0, 39.0625, 42.96875, "+3.90625"},
            {0, 42.96875, 46.875, "+3.90625"},
            {0, 46.875, 0, "50.78125 >= top 50: the cap goes (2nd removal)"},
            {0, 49, 0, "free and clean"},
        };
        dsb_stream_rate_state st = run("hold 1", &h1, 0, s, sizeof s / sizeof s[0]);
        /* increases: 30 36 42 48 | 31.25 | 19.53 23.44 27.34 31.25 35.16 39.06 42.97 46.88 50.78 */
        CHECK(st.decreases == 3 && st.increases == 14 && st.removals == 2,
              "hold 1: 3 decreases, 14 increases, 2 removals (%llu, %llu, %llu)",
              (unsigned long long)st.decreases, (unsigned long long)st.increases,
              (unsigned long long)st.removals);
        CHECK(st.lowest == 15.625 && st.top == 50 && st.failed == 31.25 && !st.own,
              "hold 1: lowest cap 15.625, top 50, F 31.25, free (%g, %g, %g, %d)", st.lowest,
              st.top, st.failed, st.own);
    }
    { /* a resend at the policy's cap doubles the hold each time; a removal resets it */
        static const step s[] = {
            {1, 64, 32, "free, lost: F = 64, cap 32, hold 1 (step 8, plateau 56)"},
            {0, 32, 40, "+8"},
            {1, 40, 20, "lost at the cap: F = 40, cap 20, hold 2 (step 5, plateau 35)"},
            {0, 20, 25, "+5"},
            {0, 25, 30, "+5"},
            {0, 30, 35, "+5: the plateau"},
            {0, 35, 35, "hold 1 of 2"},
            {0, 35, 35, "hold 2 of 2"},
            {0, 35, 40, "tries F = 40"},
            {1, 40, 20, "lost again: F = 40, cap 20, hold 4"},
            {0, 20, 25, "+5"},
            {0, 25, 30, "+5"},
            {0, 30, 35, "+5"},
            {0, 35, 35, "hold 1 of 4"},
            {0, 35, 35, "hold 2 of 4"},
            {1, 35, 17.5, "lost at the plateau itself: F = 35, cap 17.5, hold 8"},
        };
        dsb_stream_rate_state st = run("backoff", &h1, 0, s, sizeof s / sizeof s[0]);
        CHECK(st.wait == 8 && st.top == 64, "backoff: hold 8 passes now (%u), top 64 (%g)",
              st.wait, st.top);
    }
    { /* an attempt that ran below its cap: F is its measured rate */
        static const step s[] = {
            {1, 16, 8, "free, lost at 16: cap 8"},
            {1, 6, 3, "cap 8 but sent at 6: F = 6, cap 3"},
            {1, 10, 1.5, "cap 3, measured 10 (above the cap: a short attempt): F = the cap 3"},
        };
        run("below the cap", &h1, 0, s, sizeof s / sizeof s[0]);
    }
    { /* up = 0: the older generator's ladder, which only falls */
        dsb_stream_rate_policy p = h1;
        p.up = 0;
        static const step s[] = {
            {1, 60, 30, "free, lost at 60: half"},
            {0, 30, 30, "clean: never raised"},
            {0, 30, 30, "clean"},
            {1, 30, 15, "half again"},
            {0, 15, 15, "clean"},
        };
        dsb_stream_rate_state st = run("up 0", &p, 0, s, sizeof s / sizeof s[0]);
        CHECK(st.increases == 0 && st.removals == 0, "up 0: never raised");
    }
    { /* hold 0, down 3/4, up 1/4: plain AIMD, F tried right after the plateau */
        dsb_stream_rate_policy p = {0.75, 0.25, 0, 0};
        static const step s[] = {
            {1, 32, 24, "free, lost at 32: cap 3/4 x 32; step 8, plateau 24: already there"},
            {0, 24, 0, "at the plateau, no hold: tries F = 32 = top: the cap goes"},
            {1, 32, 24, "lost again, free"},
            {1, 24, 18, "lost at the cap: F = 24, cap 18, hold 2 x 0 = 0; step 6, plateau 18"},
            {0, 18, 24, "no hold: tries F = 24"},
            {0, 24, 30, "above F: +6"},
            {0, 30, 0, "36 >= top 32: the cap goes"},
        };
        run("plain AIMD", &p, 0, s, sizeof s / sizeof s[0]);
    }
    { /* the user's cap (--rate 8): the policy never goes above it, and goes back to it */
        static const step s[] = {
            {0, 8, 8, "clean at the user's cap: top 8"},
            {1, 8, 4, "lost at 8: F = 8, cap 4; step 1, plateau 7"},
            {0, 4, 5, "+1"},
            {0, 5, 6, "+1"},
            {0, 6, 7, "+1: the plateau"},
            {0, 7, 7, "hold 1"},
            {0, 7, 8, "tries F = 8 = the limit: back at the user's cap"},
            {1, 7.5, 3.75, "at the user's cap, sent at 7.5: F = 7.5"},
        };
        dsb_stream_rate_state st = run("user's cap", &h1, 8, s, sizeof s / sizeof s[0]);
        CHECK(st.removals == 1 && st.own, "user's cap: one return to it (%llu), the policy's cap "
              "again", (unsigned long long)st.removals);
    }
    { /* rates that are no binary fractions: 1.1 + 3 x 0.275 falls short of the plateau
       * 2.2 - 0.275 by a rounding (1.9249999999999998 against 1.9250000000000003), which
       * must count as the plateau, not cost a pass for a step of 4e-16 */
        static const step s[] = {
            {1, 2.2, 1.1, "free, lost at 2.2: cap 1.1; step 0.275, plateau 1.925"},
            {0, 1.1, 1.375, "+0.275"},
            {0, 1.375, 1.65, "+0.275"},
            {0, 1.65, 1.925, "+0.275: the plateau, but for a rounding"},
            {0, 1.925, 1.925, "hold 1 (not another step)"},
            {0, 1.925, 0, "tries F = 2.2 = top: the cap goes"},
        };
        run_tol("rounding", &h1, 0, s, sizeof s / sizeof s[0], 1e-12);
    }
    { /* pace: the climb's end keeps the cap at top (the rate seen free) instead of removing it */
        const dsb_stream_rate_policy pc = {0.5, 0.125, 2, 1};
        static const step s[] = {
            {1, 48, 24, "free, lost at 48: top 48, F = 48, cap 24, hold 2"},
            {0, 24, 30, "+6"},
            {0, 30, 36, "+6"},
            {0, 36, 42, "+6: the plateau"},
            {0, 42, 42, "hold 1 of 2"},
            {0, 42, 42, "hold 2 of 2"},
            {0, 42, 48, "tries F = 48 = top: kept there, paced (no removal)"},
            {0, 48, 48, "clean at the kept cap: it stays"},
            {0, 47.5, 48, "clean, sent a little under it: it stays"},
            {1, 48, 24, "lost at the kept cap: F = 48, cap 24, hold doubled: 4"},
            {0, 24, 30, "+6"},
            {0, 30, 36, "+6"},
            {0, 36, 42, "+6: the plateau"},
            {0, 42, 42, "hold 1 of 4"},
            {0, 42, 42, "hold 2 of 4"},
            {0, 42, 42, "hold 3 of 4"},
            {0, 42, 42, "hold 4 of 4"},
            {0, 42, 48, "tries F = 48 = top: kept again"},
        };
        dsb_stream_rate_state st = run("pace", &pc, 0, s, sizeof s / sizeof s[0]);
        CHECK(st.kept && st.own && st.removals == 0 && st.decreases == 2 && st.wait == 2,
              "pace: kept, the policy's cap, no removal, 2 decreases, hold back at 2 (%d %d "
              "%llu %llu %u)", st.kept, st.own, (unsigned long long)st.removals,
              (unsigned long long)st.decreases, st.wait);
        static const step t[] = {
            {0, 40, 0, "free and clean: top 40"},
            {1, 36, 18, "free, lost at 36: F = 36, cap 18; step 4.5, plateau 31.5"},
            {0, 18, 22.5, "+4.5"},
            {0, 22.5, 27, "+4.5"},
            {0, 27, 31.5, "+4.5: the plateau"},
            {0, 31.5, 31.5, "hold 1 of 2"},
            {0, 31.5, 31.5, "hold 2 of 2"},
            {0, 31.5, 36, "tries F = 36 (below top 40)"},
            {0, 36, 40, "40.5 would pass top 40: kept at 40 itself"},
            {0, 40, 40, "stays"},
        };
        st = run("pace, a step past top", &pc, 0, t, sizeof t / sizeof t[0]);
        CHECK(st.kept && st.top == 40 && st.removals == 0, "pace past top: kept at 40");
        static const step u[] = {
            {0, 8, 8, "clean at the user's cap: top 8"},
            {1, 8, 4, "lost at 8: F = 8, cap 4; step 1, plateau 7"},
            {0, 4, 5, "+1"},
            {0, 5, 6, "+1"},
            {0, 6, 7, "+1: the plateau"},
            {0, 7, 7, "hold 1 of 2"},
            {0, 7, 7, "hold 2 of 2"},
            {0, 7, 8, "tries F = 8 = the limit: back at the user's cap, as without pace"},
        };
        st = run("pace, the user's cap", &pc, 8, u, sizeof u / sizeof u[0]);
        CHECK(!st.kept && !st.own && st.removals == 1, "pace, user's cap: the user's again");
        static const step w[] = {
            {0, 7.75, 8, "clean at the user's cap 8, sent at 7.75: top 7.75"},
            {1, 7.875, 3.9375, "lost at the user's cap, sent at 7.875: top and F 7.875"},
            {0, 3.9375, 4.921875, "+0.984375 (plateau 6.890625)"},
            {0, 4.921875, 5.90625, "+0.984375"},
            {0, 5.90625, 6.890625, "+0.984375: the plateau"},
            {0, 6.890625, 6.890625, "hold 1 of 2"},
            {0, 6.890625, 6.890625, "hold 2 of 2"},
            {0, 6.890625, 8, "tries F = 7.875 = top, which is the rate under the user's cap: "
                             "back at the user's 8, not kept at 7.875"},
        };
        st = run("pace, top under the user's cap", &pc, 8, w, sizeof w / sizeof w[0]);
        CHECK(!st.kept && !st.own && st.removals == 1, "pace, top under the user's cap: the "
              "user's again");
    }
    { /* the floor: never below 0.01 Gb/s */
        static const step s[] = {
            {1, 0.015, 0.01, "lost at 0.015: half is 0.0075, the floor 0.01"},
            {1, 0.01, 0.01, "lost at the floor: stays"},
            {1, 0, 0.01, "a rate of 0 (no time measured) at the floor's cap: the floor"},
        };
        run("floor", &h1, 0, s, sizeof s / sizeof s[0]);
    }
    { /* bad policies, with what is wrong */
        dsb_stream_rate_policy p = d;
        p.down = 1;
        const char *m = dsb_stream_rate_policy_check(&p);
        CHECK(m && strstr(m, "down"), "down 1 refused: %s", m ? m : "(accepted)");
        p.down = 0.04;
        CHECK(dsb_stream_rate_policy_check(&p) != NULL, "down 0.04 refused");
        p = d;
        p.up = -0.1;
        m = dsb_stream_rate_policy_check(&p);
        CHECK(m && strstr(m, "up"), "up -0.1 refused: %s", m ? m : "(accepted)");
        p.up = 1.5;
        CHECK(dsb_stream_rate_policy_check(&p) != NULL, "up 1.5 refused");
        p = d;
        p.hold = 1001;
        m = dsb_stream_rate_policy_check(&p);
        CHECK(m && strstr(m, "hold"), "hold 1001 refused: %s", m ? m : "(accepted)");
        p = d;
        p.pace = 2;
        m = dsb_stream_rate_policy_check(&p);
        CHECK(m && strstr(m, "pace"), "pace 2 refused: %s", m ? m : "(accepted)");
        p = (dsb_stream_rate_policy){0.05, 1, 1000, 1};
        CHECK(dsb_stream_rate_policy_check(&p) == NULL, "the bounds themselves accepted");
    }
    return check_done();
}
