// racehorse java engine: the program racehorse runs in the JVM (written for racehorse).
//
// Protocol (one line each way): started as `RhJava WAREHOUSES SEED`, it builds the data,
// starts one thread per warehouse and prints `RH READY WAREHOUSES BUILD_MS`. For each `SNAP`
// line on stdin it prints a snapshot taken by every thread between two transactions:
//   RH SNAP UPTIME_MS JIT_MS HEAP_USED_BYTES
//   RH GC COUNT TIME_MS NAME            (one per garbage collector bean)
//   RH TX NAME COUNT SUM_NS BUCKETS     (one per transaction type; BUCKETS = idx:n,... or -)
//   RH END
// On `STOP` the threads finish their transaction and stop, the totals are checked and it
// prints `RH CHECK OK ...` (exit 0) or `RH CHECK FAILED reason` (exit 3). A thread that
// fails prints `RH FAILED reason` (exit 3); stdin closing without STOP exits 4.

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.management.CompilationMXBean;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.util.concurrent.locks.LockSupport;

public final class RhJava {
    private static final PrintStream OUT = System.out;

    public static void main(String[] args) throws Exception {
        int count = Integer.parseInt(args[0]);
        long seed = Long.parseLong(args[1]);
        long t0 = System.nanoTime();
        Model m = new Model(count, seed);
        Txns txns = new Txns(m);
        Worker[] ws = new Worker[count];
        for (int w = 0; w < count; w++) {
            ws[w] = new Worker(txns, m.warehouses[w], seed);
        }
        for (Worker w : ws) {
            w.start();
        }
        say("RH READY " + count + " " + (System.nanoTime() - t0) / 1_000_000);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        int epoch = 0;
        String line;
        while ((line = in.readLine()) != null) {
            line = line.trim();
            if (line.equals("SNAP")) {
                epoch++;
                collect(ws, epoch);
                say(snapshot(ws));
            } else if (line.equals("STOP")) {
                System.exit(stop(m, ws));
            }
        }
        System.exit(4);
    }

    private static void say(String text) {
        OUT.println(text);
        OUT.flush();
    }

    /** Asks every thread for a snapshot and waits for all; a dead thread ends the program. */
    private static void collect(Worker[] ws, int epoch) {
        for (Worker w : ws) {
            w.asked = epoch;
        }
        for (Worker w : ws) {
            while (w.answered != epoch) {
                if (!w.isAlive() && w.answered != epoch) {
                    Throwable t = w.failure;
                    say("RH FAILED " + w.getName() + ": " + (t == null ? "stopped" : t.toString()));
                    System.exit(3);
                }
                LockSupport.parkNanos(20_000);
            }
        }
    }

    private static String snapshot(Worker[] ws) {
        StringBuilder sb = new StringBuilder(4096);
        CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        long jitMs = jit != null && jit.isCompilationTimeMonitoringSupported() ? jit.getTotalCompilationTime() : -1;
        long heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
        sb.append("RH SNAP ").append(ManagementFactory.getRuntimeMXBean().getUptime()).append(' ').append(jitMs)
                .append(' ').append(heap).append('\n');
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            sb.append("RH GC ").append(gc.getCollectionCount()).append(' ').append(gc.getCollectionTime())
                    .append(' ').append(gc.getName()).append('\n');
        }
        for (int t = 0; t < Worker.TYPES; t++) {
            long n = 0;
            long sum = 0;
            long[] buckets = new long[Worker.BUCKETS];
            for (Worker w : ws) {
                n += w.snapCounts[t];
                sum += w.snapSumNs[t];
                for (int b = 0; b < Worker.BUCKETS; b++) {
                    buckets[b] += w.snapHist[t][b];
                }
            }
            sb.append("RH TX ").append(Txns.NAMES[t]).append(' ').append(n).append(' ').append(sum).append(' ');
            int written = 0;
            for (int b = 0; b < Worker.BUCKETS; b++) {
                if (buckets[b] != 0) {
                    sb.append(written++ == 0 ? "" : ",").append(b).append(':').append(buckets[b]);
                }
            }
            sb.append(written == 0 ? "-" : "").append('\n');
        }
        return sb.append("RH END").toString();
    }

    private static int stop(Model m, Worker[] ws) throws InterruptedException {
        for (Worker w : ws) {
            w.running = false;
        }
        for (Worker w : ws) {
            w.join();
            if (w.failure != null) {
                say("RH FAILED " + w.getName() + ": " + w.failure);
                return 3;
            }
        }
        long[] done = new long[Worker.TYPES];
        for (Worker w : ws) {
            for (int t = 0; t < Worker.TYPES; t++) {
                done[t] += w.count(t);
            }
        }
        String fault = System.getenv("RACEHORSE_JAVA_INJECT_FAULT");
        if (fault != null && !fault.isEmpty()) {
            m.warehouses[0].districts[0].ytdCents += 1;
        }
        String why = Check.verify(m, done);
        if (why != null) {
            say("RH CHECK FAILED " + why);
            return 3;
        }
        say("RH CHECK OK new_orders=" + done[Txns.NEW_ORDER] + " payments=" + done[Txns.PAYMENT]
                + " deliveries=" + done[Txns.DELIVERY]);
        return 0;
    }
}
