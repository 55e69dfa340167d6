// racehorse java engine: the self-check after the threads stopped (written for racehorse).
// Every total the transactions keep twice must agree exactly (money in cents); the first
// disagreement is the reason the cell fails.

final class Check {
    private Check() {
    }

    /** Null when every total agrees, else the first disagreement. `done`: transactions per type. */
    static String verify(Model m, long[] done) {
        long balances = 0;
        long deliveredCents = 0;
        long payments = 0;
        long histories = 0;
        long stockOrders = 0;
        long stockYtd = 0;
        long lines = 0;
        long quantity = 0;
        long orders = 0;
        long delivered = 0;
        long customerDeliveries = 0;
        long customerPayments = 0;
        for (Model.Warehouse w : m.warehouses) {
            long districts = 0;
            for (Model.District d : w.districts) {
                districts += d.ytdCents;
            }
            if (districts != w.ytdCents) {
                return "warehouse " + w.id + ": W_YTD is " + w.ytdCents + " cents but its districts' D_YTD add up to "
                        + districts;
            }
            if (w.ytdCents - w.ytdAtStart != w.paymentsCents) {
                return "warehouse " + w.id + ": W_YTD grew by " + (w.ytdCents - w.ytdAtStart) + " cents but "
                        + w.paymentsCents + " were paid";
            }
            payments += w.paymentsCents;
            histories += w.historyCount;
            for (Model.Stock s : w.stock) {
                stockOrders += s.orderCount;
                stockYtd += s.ytd;
            }
            stockOrders -= w.stockOrdersAtStart;
            stockYtd -= w.stockYtdAtStart;
            for (Model.District d : w.districts) {
                String why = district(w, d);
                if (why != null) {
                    return why;
                }
                orders += d.ordersCreated;
                lines += d.linesCreated;
                quantity += d.quantityCreated;
                delivered += d.delivered;
                deliveredCents += d.deliveredCents;
                for (Model.Customer c : d.customers) {
                    balances += c.balanceCents;
                    customerDeliveries += c.deliveryCount;
                    customerPayments += c.paymentCount - 1;
                }
            }
        }
        if (orders != done[Txns.NEW_ORDER]) {
            return orders + " orders were entered but " + done[Txns.NEW_ORDER] + " new-order transactions ran";
        }
        if (histories != done[Txns.PAYMENT] || customerPayments != histories) {
            return done[Txns.PAYMENT] + " payments ran, " + histories + " history rows and " + customerPayments
                    + " customer payments were recorded";
        }
        if (stockOrders != lines) {
            return "the stock counts " + stockOrders + " order lines but the orders hold " + lines;
        }
        if (stockYtd != quantity) {
            return "the stock's S_YTD grew by " + stockYtd + " but the order lines ordered " + quantity;
        }
        if (customerDeliveries != delivered) {
            return "customers count " + customerDeliveries + " deliveries but the districts delivered " + delivered;
        }
        long want = m.customerBalanceAtStart + deliveredCents - payments;
        if (balances != want) {
            return "the customers' balances add up to " + balances + " cents, not " + want
                    + " (start + delivered - paid)";
        }
        return null;
    }

    private static String district(Model.Warehouse w, Model.District d) {
        String at = "warehouse " + w.id + " district " + d.id + ": ";
        if (d.nextOrderId - 1 != Model.INITIAL_ORDERS + d.ordersCreated) {
            return at + "D_NEXT_O_ID is " + d.nextOrderId + " after " + d.ordersCreated + " new orders";
        }
        long waiting = Model.INITIAL_UNDELIVERED + d.ordersCreated - d.delivered;
        if (d.undelivered.size() != waiting) {
            return at + d.undelivered.size() + " orders wait for delivery, not " + waiting;
        }
        if (!d.undelivered.isEmpty()) {
            int first = d.undelivered.peekFirst().id;
            int last = d.undelivered.peekLast().id;
            if (last - first + 1 != d.undelivered.size() || last != d.nextOrderId - 1) {
                return at + "the undelivered orders " + first + ".." + last + " are not the newest "
                        + d.undelivered.size();
            }
        }
        for (Model.Order o : d.undelivered) {
            if (o.carrier != 0) {
                return at + "order " + o.id + " waits for delivery but has carrier " + o.carrier;
            }
        }
        return null;
    }
}
