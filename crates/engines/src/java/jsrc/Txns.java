// racehorse java engine: the five transactions of the warehouse mix (written for racehorse).
// Each warehouse's data is guarded by its own monitor; a transaction never holds two monitors
// at once (remote stock and remote customers are updated under their warehouse's monitor
// alone), so the threads cannot deadlock.

import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;

final class Txns {
    static final int NEW_ORDER = 0;
    static final int PAYMENT = 1;
    static final int ORDER_STATUS = 2;
    static final int DELIVERY = 3;
    static final int STOCK_LEVEL = 4;
    static final String[] NAMES = {"new_order", "payment", "order_status", "delivery", "stock_level"};

    private final Model m;

    Txns(Model m) {
        this.m = m;
    }

    /** The mix: 45% new-order, 43% payment, 4% each of order-status, delivery, stock-level. */
    static int pick(Rand r) {
        int p = r.below(100);
        return p < 45 ? NEW_ORDER : p < 88 ? PAYMENT : p < 92 ? ORDER_STATUS : p < 96 ? DELIVERY : STOCK_LEVEL;
    }

    long run(int type, Model.Warehouse home, Rand r, long now) {
        switch (type) {
            case NEW_ORDER:
                return newOrder(home, r, now);
            case PAYMENT:
                return payment(home, r);
            case ORDER_STATUS:
                return orderStatus(home, r);
            case DELIVERY:
                return delivery(home, r, now);
            default:
                return stockLevel(home, r);
        }
    }

    private Model.Warehouse other(Model.Warehouse home, Rand r) {
        int n = m.warehouses.length;
        int pick = r.below(n - 1);
        return m.warehouses[pick >= home.id - 1 ? pick + 1 : pick];
    }

    private static Model.Customer customer(Model.District d, Rand r) {
        if (r.below(100) < 60) {
            List<Model.Customer> same = d.byLast.get(Model.lastName(r.nuRand(255, 0, 999)));
            if (same != null && !same.isEmpty()) {
                return same.get((same.size() - 1) / 2);
            }
        }
        return d.customers[r.nuRand(1023, 1, Model.CUSTOMERS) - 1];
    }

    private long newOrder(Model.Warehouse home, Rand r, long now) {
        Model.District d = home.districts[r.below(Model.DISTRICTS)];
        Model.Customer c = d.customers[r.nuRand(1023, 1, Model.CUSTOMERS) - 1];
        Model.OrderLine[] lines = new Model.OrderLine[r.between(5, 15)];
        boolean allLocal = true;
        long total = 0;
        StringBuilder brands = new StringBuilder(lines.length);
        for (int l = 0; l < lines.length; l++) {
            int itemId = r.nuRand(8191, 1, Model.ITEMS);
            Model.Item item = m.items[itemId - 1];
            Model.Warehouse supply = home;
            if (m.warehouses.length > 1 && r.below(100) == 0) {
                supply = other(home, r);
                allLocal = false;
            }
            int qty = r.between(1, 10);
            long info;
            synchronized (supply) {
                Model.Stock s = supply.stock[itemId - 1];
                if (s.quantity >= qty + 10) {
                    s.quantity -= qty;
                } else {
                    s.quantity += 91 - qty;
                }
                s.ytd += qty;
                s.orderCount++;
                if (supply != home) {
                    s.remoteCount++;
                }
                info = s.distInfo;
            }
            long amount = qty * item.priceCents;
            brands.append(item.original ? 'B' : 'G');
            lines[l] = new Model.OrderLine(itemId, supply.id, qty, amount, Long.toString(info, 36));
            total += amount;
        }
        total = total * (10_000 - c.discountBp) / 10_000 * (10_000 + home.taxBp + d.taxBp) / 10_000;
        synchronized (home) {
            Model.Order o = new Model.Order(d.nextOrderId++, c, now, allLocal, lines);
            d.addOrder(o);
            c.lastOrder = o;
        }
        return total + brands.length();
    }

    private long payment(Model.Warehouse home, Rand r) {
        Model.District d = home.districts[r.below(Model.DISTRICTS)];
        Model.Warehouse cw = home;
        Model.District cd = d;
        if (m.warehouses.length > 1 && r.below(100) < 15) {
            cw = other(home, r);
            cd = cw.districts[r.below(Model.DISTRICTS)];
        }
        long amount = r.between(100, 500_000);
        Model.Customer c = customer(cd, r);
        synchronized (home) {
            home.ytdCents += amount;
            d.ytdCents += amount;
            home.paymentsCents += amount;
            String data = home.id + "/" + d.id + " paid " + amount + " for " + c.last;
            home.history.addLast(new Model.History(c, amount, data));
            if (home.history.size() > Model.HISTORY_KEPT) {
                home.history.removeFirst();
            }
            home.historyCount++;
        }
        synchronized (cw) {
            c.balanceCents -= amount;
            c.ytdPaymentCents += amount;
            c.paymentCount++;
            if (c.badCredit) {
                String entry = c.id + " " + cd.id + " " + cw.id + " " + d.id + " " + home.id + " " + amount + "|";
                String data = entry + c.data;
                c.data = data.length() > 500 ? data.substring(0, 500) : data;
            }
            return c.balanceCents;
        }
    }

    private long orderStatus(Model.Warehouse home, Rand r) {
        Model.District d = home.districts[r.below(Model.DISTRICTS)];
        Model.Customer c = customer(d, r);
        List<String> rows = new ArrayList<>();
        synchronized (home) {
            Model.Order o = c.lastOrder;
            if (o == null) {
                return c.balanceCents;
            }
            for (Model.OrderLine l : o.lines) {
                rows.add(l.itemId + ":" + l.supplyWarehouse + ":" + l.quantity + ":" + l.amountCents + ":"
                        + l.deliveredAt);
            }
            rows.add(c.first + " " + c.last + " " + c.balanceCents + " " + o.id + " " + o.carrier);
        }
        return rows.size();
    }

    private long delivery(Model.Warehouse home, Rand r, long now) {
        int carrier = r.between(1, 10);
        long sum = 0;
        synchronized (home) {
            for (Model.District d : home.districts) {
                int n = d.undelivered.size() > Model.INITIAL_UNDELIVERED ? 2 : 1;
                for (int k = 0; k < n; k++) {
                    Model.Order o = d.undelivered.pollFirst();
                    if (o == null) {
                        break;
                    }
                    o.carrier = carrier;
                    long amount = 0;
                    for (Model.OrderLine l : o.lines) {
                        l.deliveredAt = now;
                        amount += l.amountCents;
                    }
                    o.customer.balanceCents += amount;
                    o.customer.deliveryCount++;
                    d.delivered++;
                    d.deliveredCents += amount;
                    sum += amount;
                }
            }
        }
        return sum;
    }

    private long stockLevel(Model.Warehouse home, Rand r) {
        Model.District d = home.districts[r.below(Model.DISTRICTS)];
        int threshold = r.between(10, 20);
        HashSet<Integer> items = new HashSet<>();
        int low = 0;
        synchronized (home) {
            Iterator<Model.Order> it = d.recent.descendingIterator();
            for (int k = 0; k < 20 && it.hasNext(); k++) {
                for (Model.OrderLine l : it.next().lines) {
                    items.add(l.itemId);
                }
            }
            for (Integer id : items) {
                if (home.stock[id - 1].quantity < threshold) {
                    low++;
                }
            }
        }
        return low;
    }
}
