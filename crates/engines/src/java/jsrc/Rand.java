// racehorse java engine: a small seeded generator (SplitMix64 steps), one per thread, and the
// skewed choices of the transaction mix (written for racehorse).

final class Rand {
    private long state;

    Rand(long seed) {
        state = seed * 0x9E3779B97F4A7C15L + 0x632BE59BD9B4E019L;
    }

    long next() {
        long z = (state += 0x9E3779B97F4A7C15L);
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    /** Uniform in [0, n). */
    int below(int n) {
        return (int) ((next() >>> 33) % n);
    }

    /** Uniform in [lo, hi]. */
    int between(int lo, int hi) {
        return lo + below(hi - lo + 1);
    }

    /** Non-uniform choice in [lo, hi]: popular values are chosen more often. */
    int nuRand(int a, int lo, int hi) {
        int c = a == 255 ? 123 : a == 1023 ? 259 : 7911;
        return (((between(0, a) | between(lo, hi)) + c) % (hi - lo + 1)) + lo;
    }

    String letters(int n) {
        char[] out = new char[n];
        for (int i = 0; i < n; i++) {
            out[i] = (char) ('a' + below(26));
        }
        return new String(out);
    }

    String text(int min, int max) {
        int n = between(min, max);
        StringBuilder sb = new StringBuilder(n);
        for (int i = 0; i < n; i++) {
            int k = below(37);
            sb.append(k < 26 ? (char) ('a' + k) : k < 36 ? (char) ('0' + k - 26) : ' ');
        }
        return sb.toString();
    }

    int[] permutation(int n) {
        int[] p = new int[n];
        for (int i = 0; i < n; i++) {
            p[i] = i;
        }
        for (int i = n - 1; i > 0; i--) {
            int j = below(i + 1);
            int t = p[i];
            p[i] = p[j];
            p[j] = t;
        }
        return p;
    }
}
