// racehorse java engine: one thread per warehouse running the mix, counting each transaction
// type with its latency in a log-linear histogram (16 buckets per power of two, the same
// buckets as racehorse's own histograms). Counters are private to the thread; a snapshot is
// taken by the thread itself between two transactions when the main thread asks, so that
// the counts racehorse reads at the window's edges are exact.

final class Worker extends Thread {
    static final int TYPES = Txns.NAMES.length;
    static final int BUCKETS = 16 + 60 * 16;

    private final Txns txns;
    private final Model.Warehouse home;
    private final Rand r;
    private final long[] counts = new long[TYPES];
    private final long[] sumNs = new long[TYPES];
    private final long[][] hist = new long[TYPES][BUCKETS];

    final long[] snapCounts = new long[TYPES];
    final long[] snapSumNs = new long[TYPES];
    final long[][] snapHist = new long[TYPES][BUCKETS];

    volatile boolean running = true;
    volatile int asked;
    volatile int answered;
    volatile Throwable failure;
    long sink;

    Worker(Txns txns, Model.Warehouse home, long seed) {
        super("warehouse-" + home.id);
        this.txns = txns;
        this.home = home;
        this.r = new Rand(seed ^ (home.id * 0x5DEECE66DL));
        setDaemon(true);
    }

    static int bucket(long ns) {
        if (ns < 16) {
            return (int) Math.max(ns, 0);
        }
        int e = 63 - Long.numberOfLeadingZeros(ns);
        int sub = (int) ((ns >>> (e - 4)) & 15);
        return 16 + (e - 4) * 16 + sub;
    }

    long count(int type) {
        return counts[type];
    }

    private void answer(int a) {
        System.arraycopy(counts, 0, snapCounts, 0, TYPES);
        System.arraycopy(sumNs, 0, snapSumNs, 0, TYPES);
        for (int t = 0; t < TYPES; t++) {
            System.arraycopy(hist[t], 0, snapHist[t], 0, BUCKETS);
        }
        answered = a;
    }

    @Override
    public void run() {
        int seen = 0;
        try {
            while (running) {
                int a = asked;
                if (a != seen) {
                    answer(a);
                    seen = a;
                }
                int type = Txns.pick(r);
                long t0 = System.nanoTime();
                sink += txns.run(type, home, r, t0);
                long ns = System.nanoTime() - t0;
                counts[type]++;
                sumNs[type] += ns;
                hist[type][bucket(ns)]++;
            }
            int a = asked;
            if (a != seen) {
                answer(a);
            }
        } catch (Throwable t) {
            failure = t;
        }
    }
}
