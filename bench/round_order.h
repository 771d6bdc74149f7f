/* The order in which abbench runs its cases in a round: a Williams design,
 * so that over every round_order_period(n) rounds each case runs once in each
 * position and directly after every other case equally often (once for an
 * even n, twice for an odd n). A plain rotation keeps neighbours: the case
 * after a runtime that leaves work running in the background (agentbox's
 * netns pool filler) would always be the same one and pay for it alone. */
#ifndef AGENTBOX_BENCH_ROUND_ORDER_H
#define AGENTBOX_BENCH_ROUND_ORDER_H

static inline int round_order_period(int n)
{
	return n % 2 ? 2 * n : n;
}

/* The case run k-th (0 <= k < n) in round r (any integer, warm-up rounds
 * negative). Row r of the square is 0, 1, n-1, 2, n-2, ... shifted by r; for
 * an odd n, the second half of the period runs those rows backwards. */
static inline int round_order_case(int n, int r, int k)
{
	int period = round_order_period(n);
	int row = ((r % period) + period) % period;
	if (row >= n) {         /* odd n: the mirrored rows */
		row -= n;
		k = n - 1 - k;
	}
	int base = k == 0 ? 0 : k % 2 ? (k + 1) / 2 : n - k / 2;
	return (base + row) % n;
}

#endif
