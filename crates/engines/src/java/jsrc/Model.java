// racehorse java engine: the in-memory data of the warehouse transaction mix (written for
// racehorse). Money is kept in cents (long) so that every total can be checked exactly.

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

final class Model {
    static final int ITEMS = 100_000;
    static final int DISTRICTS = 10;
    static final int CUSTOMERS = 3_000;
    static final int INITIAL_ORDERS = 300;
    static final int INITIAL_UNDELIVERED = 90;
    /** Orders a district keeps for order-status and stock-level; older delivered ones go. */
    static final int RECENT_ORDERS = 200;
    static final int HISTORY_KEPT = 1_000;

    static final String[] SYLLABLES = {
        "BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING"
    };

    static final class Item {
        final int id;
        final long priceCents;
        final String name;
        /** Whether its data says ORIGINAL (a brand item). */
        final boolean original;

        Item(int id, long priceCents, String name, boolean original) {
            this.id = id;
            this.priceCents = priceCents;
            this.name = name;
            this.original = original;
        }
    }

    static final class Stock {
        int quantity;
        long ytd;
        int orderCount;
        int remoteCount;
        /** The district information an order line copies, as a number (a text when copied). */
        final long distInfo;

        Stock(int quantity, long distInfo) {
            this.quantity = quantity;
            this.distInfo = distInfo;
        }
    }

    static final class Customer {
        final int id;
        final District district;
        final String first;
        final String last;
        final boolean badCredit;
        final int discountBp;
        long balanceCents;
        long ytdPaymentCents;
        int paymentCount;
        int deliveryCount;
        String data;
        Order lastOrder;

        Customer(int id, District district, String first, String last, boolean badCredit, int discountBp,
                 String data) {
            this.id = id;
            this.district = district;
            this.first = first;
            this.last = last;
            this.badCredit = badCredit;
            this.discountBp = discountBp;
            this.balanceCents = -1_000;
            this.ytdPaymentCents = 1_000;
            this.paymentCount = 1;
            this.data = data;
        }
    }

    static final class OrderLine {
        final int itemId;
        final int supplyWarehouse;
        final int quantity;
        final long amountCents;
        final String distInfo;
        long deliveredAt;

        OrderLine(int itemId, int supplyWarehouse, int quantity, long amountCents, String distInfo) {
            this.itemId = itemId;
            this.supplyWarehouse = supplyWarehouse;
            this.quantity = quantity;
            this.amountCents = amountCents;
            this.distInfo = distInfo;
        }
    }

    static final class Order {
        final int id;
        final Customer customer;
        final long enteredAt;
        final boolean allLocal;
        final OrderLine[] lines;
        int carrier;

        Order(int id, Customer customer, long enteredAt, boolean allLocal, OrderLine[] lines) {
            this.id = id;
            this.customer = customer;
            this.enteredAt = enteredAt;
            this.allLocal = allLocal;
            this.lines = lines;
        }

        long amountCents() {
            long sum = 0;
            for (OrderLine l : lines) {
                sum += l.amountCents;
            }
            return sum;
        }
    }

    static final class History {
        final Customer customer;
        final long amountCents;
        final String data;

        History(Customer customer, long amountCents, String data) {
            this.customer = customer;
            this.amountCents = amountCents;
            this.data = data;
        }
    }

    static final class District {
        final int id;
        final Warehouse warehouse;
        final int taxBp;
        long ytdCents = 3_000_000;
        int nextOrderId = 1;
        final Customer[] customers = new Customer[CUSTOMERS];
        final Map<String, List<Customer>> byLast = new HashMap<>();
        /** Undelivered orders, oldest first (the NEW-ORDER table). */
        final ArrayDeque<Order> undelivered = new ArrayDeque<>();
        /** The latest orders, oldest first. */
        final ArrayDeque<Order> recent = new ArrayDeque<>();
        long ordersCreated;
        long linesCreated;
        long quantityCreated;
        long delivered;
        long deliveredCents;

        District(int id, Warehouse warehouse, int taxBp) {
            this.id = id;
            this.warehouse = warehouse;
            this.taxBp = taxBp;
        }

        void addOrder(Order o) {
            recent.addLast(o);
            undelivered.addLast(o);
            ordersCreated++;
            linesCreated += o.lines.length;
            for (OrderLine l : o.lines) {
                quantityCreated += l.quantity;
            }
            while (recent.size() > RECENT_ORDERS && recent.peekFirst().carrier != 0) {
                recent.removeFirst();
            }
        }
    }

    static final class Warehouse {
        final int id;
        final int taxBp;
        long ytdCents;
        final District[] districts = new District[DISTRICTS];
        final Stock[] stock = new Stock[ITEMS];
        final ArrayDeque<History> history = new ArrayDeque<>();
        long historyCount;
        long paymentsCents;
        long ytdAtStart;
        /** Its stock's totals before the run (order lines it supplied, quantities). */
        long stockYtdAtStart;
        long stockOrdersAtStart;

        Warehouse(int id, int taxBp) {
            this.id = id;
            this.taxBp = taxBp;
            this.ytdCents = 30_000_000;
        }
    }

    final Item[] items = new Item[ITEMS];
    final Warehouse[] warehouses;
    final long customerBalanceAtStart;

    Model(int count, long seed) {
        Rand r = new Rand(seed);
        for (int i = 0; i < ITEMS; i++) {
            items[i] = new Item(i + 1, 100 + r.below(9_901), r.text(14, 24), r.below(10) == 0);
        }
        warehouses = new Warehouse[count];
        long balances = 0;
        for (int w = 0; w < count; w++) {
            warehouses[w] = buildWarehouse(w + 1, r);
            for (District d : warehouses[w].districts) {
                for (Customer c : d.customers) {
                    balances += c.balanceCents;
                }
            }
        }
        customerBalanceAtStart = balances;
    }

    /** The 1000 last names, made of three syllables each. */
    static final String[] LAST_NAMES = new String[1_000];

    static {
        for (int n = 0; n < LAST_NAMES.length; n++) {
            LAST_NAMES[n] = SYLLABLES[n / 100] + SYLLABLES[(n / 10) % 10] + SYLLABLES[n % 10];
        }
    }

    static String lastName(int n) {
        return LAST_NAMES[n];
    }

    private Warehouse buildWarehouse(int id, Rand r) {
        Warehouse w = new Warehouse(id, r.below(2_001));
        for (int i = 0; i < ITEMS; i++) {
            w.stock[i] = new Stock(10 + r.below(91), r.next() >>> 8);
        }
        for (int d = 0; d < DISTRICTS; d++) {
            District dist = new District(d + 1, w, r.below(2_001));
            w.districts[d] = dist;
            for (int c = 0; c < CUSTOMERS; c++) {
                String last = lastName(c < 1_000 ? c : r.nuRand(255, 0, 999));
                Customer cu = new Customer(c + 1, dist, r.letters(8 + r.below(9)), last, r.below(10) == 0,
                        r.below(5_001), r.text(50, 100));
                dist.customers[c] = cu;
                dist.byLast.computeIfAbsent(last, k -> new ArrayList<>()).add(cu);
            }
            for (List<Customer> same : dist.byLast.values()) {
                same.sort((a, b) -> a.first.compareTo(b.first));
            }
            initialOrders(w, dist, r);
        }
        w.ytdCents = 0;
        for (District d : w.districts) {
            w.ytdCents += d.ytdCents;
        }
        w.ytdAtStart = w.ytdCents;
        for (Stock s : w.stock) {
            w.stockYtdAtStart += s.ytd;
            w.stockOrdersAtStart += s.orderCount;
        }
        return w;
    }

    /** Orders that exist before the run: the last ones undelivered (they count as created). */
    private void initialOrders(Warehouse w, District d, Rand r) {
        int[] perm = r.permutation(CUSTOMERS);
        for (int o = 0; o < INITIAL_ORDERS; o++) {
            Customer c = d.customers[perm[o]];
            boolean undelivered = o >= INITIAL_ORDERS - INITIAL_UNDELIVERED;
            OrderLine[] lines = new OrderLine[5 + r.below(11)];
            for (int l = 0; l < lines.length; l++) {
                int item = r.below(ITEMS);
                long amount = undelivered ? 1 + r.below(999_999) : 0;
                Stock s = w.stock[item];
                s.ytd += 5;
                s.orderCount++;
                lines[l] = new OrderLine(item + 1, w.id, 5, amount, Long.toString(s.distInfo, 36));
            }
            Order order = new Order(d.nextOrderId++, c, 0, true, lines);
            order.carrier = undelivered ? 0 : 1 + r.below(10);
            c.lastOrder = order;
            d.recent.addLast(order);
            if (undelivered) {
                d.undelivered.addLast(order);
            }
            while (d.recent.size() > RECENT_ORDERS && d.recent.peekFirst().carrier != 0) {
                d.recent.removeFirst();
            }
        }
    }
}
