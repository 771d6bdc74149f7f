/* bench/round_order.h: every round is a permutation of the cases, and over a
 * period each case takes every position equally often and follows every other
 * case equally often (the carry-over balance that a rotation lacks). */
#include "tap.h"
#include "../../bench/round_order.h"
#include <string.h>

#define MAXN 16

int main(void)
{
	for (int n = 1; n <= MAXN; n++) {
		int period = round_order_period(n);
		int pos[MAXN][MAXN] = {{0}}, follows[MAXN][MAXN] = {{0}};
		int perm_ok = 1;
		for (int r = 0; r < period; r++) {
			int seen[MAXN] = {0}, prev = -1;
			for (int k = 0; k < n; k++) {
				int c = round_order_case(n, r, k);
				if (c < 0 || c >= n || seen[c]++) {
					perm_ok = 0;
					break;
				}
				pos[c][k]++;
				if (prev >= 0)
					follows[prev][c]++;
				prev = c;
			}
		}
		ok(perm_ok, "n=%d: every round runs each case once", n);
		int pos_ok = 1, carry_ok = 1, want_pos = period / n, want_follow = n % 2 ? 2 : 1;
		for (int a = 0; a < n; a++)
			for (int b = 0; b < n; b++) {
				if (pos[a][b] != want_pos)
					pos_ok = 0;
				if (a != b && follows[a][b] != want_follow)
					carry_ok = 0;
				if (a == b && follows[a][b] != 0)
					carry_ok = 0;
			}
		ok(pos_ok, "n=%d: each case in each position %d time(s) per %d rounds", n, want_pos, period);
		ok(n < 2 || carry_ok, "n=%d: each case right after each other one %d time(s) per %d rounds", n,
		   want_follow, period);
	}
	/* warm-up rounds are negative: the same rows, continued backwards */
	for (int k = 0; k < 5; k++)
		ok(round_order_case(5, -1, k) == round_order_case(5, 9, k), "round -1 is round 9 (n=5), position %d", k);
	return tap_done();
}
