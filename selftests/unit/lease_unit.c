// SPDX-License-Identifier: GPL-2.0
/*
 * Unit test of the lease discipline (daemon/lease.c): renewals every third
 * of the TTL, retries, fencing when renewals fail or hang, a lease etcd
 * says is gone, answers that come late or after the fence; then a seeded
 * simulation against a model of etcd's lease (extended to the receipt time
 * of each keepalive + TTL) with random delays and failures, checking the
 * safety property — the node never serves while etcd may have expired its
 * lease — and that a healthy link never fences.  TAP output.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "lease.h"
#include "tap.h"

static void test_cycle(void)
{
	struct hbm_lease l;

	ok(hbm_lease_granted(&l, 7, 10, 0, 500, 1000) == 0 && l.state == HBM_LEASE_HELD,
	   "a 10 s lease granted at 0");
	ok(hbm_lease_next(&l) == 3333 && hbm_lease_tick(&l, 3332) == HBM_LEASE_WAIT &&
	   hbm_lease_tick(&l, 3333) == HBM_LEASE_RENEW, "renewal due at a third of the TTL");
	hbm_lease_sent(&l, 3333);
	ok(hbm_lease_tick(&l, 3400) == HBM_LEASE_WAIT && hbm_lease_next(&l) == 9500,
	   "in flight: nothing to do but the fence deadline (9.5 s)");
	hbm_lease_renewed(&l, 10, 3400);
	ok(l.valid_until == 13333 && hbm_lease_next(&l) == 6666,
	   "renewed: proven until send time + TTL (13.333 s), next renewal at 6.666 s");
	hbm_lease_renewed(&l, 10, 3500);
	ok(l.valid_until == 13333, "a second answer to one keepalive is ignored");

	ok(hbm_lease_granted(&l, 7, 3, 0, 1000, 100) == -EINVAL,
	   "a margin of a third of the TTL leaves no time to renew: -EINVAL");
	ok(hbm_lease_granted(&l, 0, 10, 0, 500, 100) == -EINVAL &&
	   hbm_lease_granted(&l, 7, 0, 0, 500, 100) == -EINVAL &&
	   hbm_lease_granted(&l, 7, 10, 0, 500, 0) == -EINVAL, "id 0, TTL 0, retry 0: -EINVAL");
}

static void test_failures(void)
{
	struct hbm_lease l;
	uint64_t t;
	int renews = 0;

	hbm_lease_granted(&l, 7, 10, 0, 500, 1000);
	for (t = 0; t < 20000; t += 10) {
		enum hbm_lease_action a = hbm_lease_tick(&l, t);

		if (a == HBM_LEASE_FENCE)
			break;
		if (a == HBM_LEASE_RENEW) {
			renews++;
			hbm_lease_sent(&l, t);
			hbm_lease_failed(&l, false, t + 5);
		}
	}
	ok(t == 9500 && l.state == HBM_LEASE_FENCED && renews == 7 && l.failures == 7,
	   "etcd unreachable: 7 tries, fenced at 9.5 s, the margin before the lease's end (%llu)",
	   (unsigned long long)t);
	ok(hbm_lease_tick(&l, t + 1) == HBM_LEASE_FENCE && hbm_lease_next(&l) == UINT64_MAX,
	   "fenced is final");
	hbm_lease_sent(&l, t + 2);
	hbm_lease_renewed(&l, 10, t + 3);
	ok(l.state == HBM_LEASE_FENCED, "an answer after the fence does not unfence");

	hbm_lease_granted(&l, 7, 10, 0, 500, 1000);
	hbm_lease_sent(&l, 3333);
	ok(hbm_lease_tick(&l, 9499) == HBM_LEASE_WAIT && hbm_lease_tick(&l, 9500) == HBM_LEASE_FENCE,
	   "a keepalive that hangs: fenced at 9.5 s");

	hbm_lease_granted(&l, 7, 10, 0, 500, 1000);
	hbm_lease_sent(&l, 3333);
	hbm_lease_renewed(&l, 10, 12000);	/* answered 8.7 s later */
	ok(l.valid_until == 13333 && hbm_lease_tick(&l, 12000) == HBM_LEASE_RENEW,
	   "a late answer counts from its send time; the next renewal is overdue: at once");
	ok(hbm_lease_tick(&l, 12833) == HBM_LEASE_FENCE,
	   "and without another answer: fenced at 12.833 s");

	hbm_lease_granted(&l, 7, 10, 0, 500, 1000);
	hbm_lease_sent(&l, 3333);
	hbm_lease_failed(&l, true, 3340);
	ok(l.state == HBM_LEASE_FENCED && hbm_lease_tick(&l, 3341) == HBM_LEASE_FENCE,
	   "etcd says the lease is gone: fenced at once");
	hbm_lease_granted(&l, 7, 10, 0, 500, 1000);
	hbm_lease_sent(&l, 3333);
	hbm_lease_renewed(&l, 0, 3340);
	ok(l.state == HBM_LEASE_FENCED, "a renewal answered with TTL 0: gone, fenced");
}

/*
 * Random delays and failures against a model of etcd: the lease ends at
 * (receipt of the last keepalive it accepted + TTL).  A keepalive that
 * arrives after that end finds the lease gone.
 */
static void test_simulation(void)
{
	unsigned int seed = 1, run, unsafe = 0, fenced_healthy = 0, fenced = 0;

	for (run = 0; run < 300; run++) {
		bool healthy = run < 100;	/* the first 100: small delays, no failure */
		uint64_t ttl = 2 + rand_r(&seed) % 9, margin = 100 + rand_r(&seed) % 400;
		uint64_t now, etcd_end = ttl * 1000, answer_at = 0, receipt_at = 0;
		bool pending = false, fails = false;
		struct hbm_lease l;

		if (hbm_lease_granted(&l, 1, ttl, 0, margin, 200 + rand_r(&seed) % 800))
			continue;
		for (now = 0; now < 60000; now += 5) {
			if (pending && now >= answer_at) {
				pending = false;
				if (fails) {
					hbm_lease_failed(&l, false, now);
				} else if (receipt_at >= etcd_end) {
					hbm_lease_renewed(&l, 0, now);	/* gone */
				} else {
					etcd_end = receipt_at + ttl * 1000;
					hbm_lease_renewed(&l, ttl, now);
				}
			}
			switch (hbm_lease_tick(&l, now)) {
			case HBM_LEASE_RENEW: {
				uint64_t d = healthy ? 1 + (uint64_t)rand_r(&seed) % 50 :
					     1 + (uint64_t)rand_r(&seed) % (ttl * 700);

				hbm_lease_sent(&l, now);
				pending = true;
				fails = !healthy && rand_r(&seed) % 3 == 0;
				answer_at = now + d;
				receipt_at = now + rand_r(&seed) % (d + 1);
				break;
			}
			case HBM_LEASE_FENCE:
				goto end;
			case HBM_LEASE_WAIT:
				break;
			}
			/* safety: serving (held) while etcd's lease is over */
			if (l.state == HBM_LEASE_HELD && now >= etcd_end)
				unsafe++;
		}
end:
		if (l.state == HBM_LEASE_FENCED) {
			fenced++;
			fenced_healthy += healthy;
		}
	}
	ok(unsafe == 0, "300 runs, random delays and failures: never held once etcd's lease ended");
	ok(fenced_healthy == 0, "100 healthy runs (answers within 50 ms): never fenced");
	ok(fenced > 50, "the unhealthy runs do fence (%u of 200)", fenced);
}

int main(void)
{
	test_cycle();
	test_failures();
	test_simulation();
	return tap_finish();
}
