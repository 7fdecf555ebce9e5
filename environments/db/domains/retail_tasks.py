"""Task intents for the retail domain (see `environments.db.synth`)."""

from __future__ import annotations

from sqlalchemy import select

from environments.db.core import money
from environments.db.domains.retail import CATEGORIES, TIERS, Customer, Order, OrderItem, Product
from environments.db.domains.retail_tools import paid_cents, refunded_cents
from environments.db.intents import Ctx, Draft, call, grounds, items, refuse, scalar


def _customers(c: Ctx) -> list[Customer]:
    return list(c.s.scalars(select(Customer).order_by(Customer.id)))


def _orders(c: Ctx, *statuses: str) -> list[Order]:
    return list(c.s.scalars(select(Order).where(Order.status.in_(statuses)).order_by(Order.id)))


def _name(c: Ctx, cust: Customer) -> str:
    return c.say(f"{cust.name}", f"{cust.name} (customer #{cust.id})", f"customer {cust.id}, {cust.name}")


def update_email(c: Ctx) -> Draft:
    cust = c.pick(_customers(c))
    first, last = cust.name.split(" ")[0].lower(), cust.name.split(" ")[-1].lower()
    email = f"{first}.{last}{c.rng.randint(1, 99)}@{c.pick(['fastmail.test', 'inbox.test', 'post.test'])}"
    who = _name(c, cust)
    prompt = c.say(f"{who} has a new email address: {email}. Please update their record.",
                   f"Please change the email on file for {who} to {email}.",
                   f"{who} wrote in asking us to use {email} from now on. Update the account accordingly.")
    return Draft("update-email", f"Update the email of {cust.name}", prompt,
                 [call("update_customer", customer_id=cust.id, email=email)], "write")


def change_tier(c: Ctx) -> Draft:
    # Any customer to either other tier, one or two at a time: upgrades alone of one customer drew
    # from ~100 (customer, tier) pairs, the same ids on every database (issue #38).
    people = _customers(c)
    k = c.pick([1, 2])
    if len(people) < k:
        raise LookupError("too few customers")
    moves = [(cust, c.pick([t for t in TIERS if t != cust.tier]))
             for cust in sorted(c.rng.sample(people, k), key=lambda x: x.id)]
    if k == 1:
        (cust, tier), = moves
        who = _name(c, cust)
        up = TIERS.index(tier) > TIERS.index(cust.tier)
        prompt = c.say(f"Move {who} to the {tier} loyalty tier.",
                       f"{'Upgrade' if up else 'Downgrade'} {who}'s loyalty tier to {tier}.",
                       f"{who} {'qualifies for' if up else 'no longer qualifies above'} {tier} status now; update the "
                       "tier.")
    else:
        listed = " and ".join(f"{_name(c, cust)} to {tier}" for cust, tier in moves)
        prompt = c.say(f"After the loyalty review, move {listed}.",
                       f"Loyalty tiers to update: {listed}.")
    return Draft("change-tier", "Change the tier of " + " and ".join(cust.name for cust, _ in moves), prompt,
                 [call("update_customer", customer_id=cust.id, tier=tier) for cust, tier in moves], "write")


def reprice(c: Ctx) -> Draft:
    p = c.pick(list(c.s.scalars(select(Product).order_by(Product.id))))
    pct = c.pick([10, 15, 20, 25])
    up = c.rng.random() < 0.5
    new = round(p.price_cents * (100 + (pct if up else -pct)) / 100)
    prompt = c.say(f"Set the price of the {p.name} (SKU {p.sku}) to ${money(new)}.",
                   f"{'Raise' if up else 'Cut'} the price of {p.name} to ${money(new)} per unit.",
                   f"Our pricing team wants {p.name} at ${money(new)}. Make the change.")
    return Draft("reprice-product", f"Reprice {p.name}", prompt,
                 [call("update_product", product_id=p.id, price=new / 100)], "write")


def refund_partial(c: Ctx) -> Draft:
    o = c.pick([o for o in _orders(c, "delivered", "shipped")
                if paid_cents(c.s, o.id) - refunded_cents(c.s, o.id) >= 2000])
    avail = paid_cents(c.s, o.id) - refunded_cents(c.s, o.id)
    amount = c.pick([1000, 1500, 2000, min(avail, 2500)])
    reason = c.pick(["damaged item", "late delivery", "missing part", "wrong colour"])
    cust = c.s.get(Customer, o.customer_id)
    prompt = c.say(f"Refund ${money(amount)} on order #{o.id} for {cust.name}; reason: {reason}.",
                   f"Order {o.id} of {cust.name} arrived with a problem ({reason}). Issue a ${money(amount)} refund.",
                   f"{cust.name} is owed ${money(amount)} back on order {o.id} because of a {reason}. Process it.")
    return Draft("refund-order", f"Refund part of order {o.id}", prompt,
                 [call("get_order", order_id=o.id),
                  call("refund_order", order_id=o.id, amount=amount / 100, reason=reason)], "write",
                 difficulty="medium")


def cancel(c: Ctx) -> Draft:
    # One or two orders: a single `cancel_order` call is one of ~65 open order ids that every
    # database shares, so a memorised call fit a few tasks in a hundred (issue #38).
    open_orders, k = _orders(c, "pending", "paid"), c.pick([1, 2])
    if len(open_orders) < k:
        raise LookupError("too few open orders")
    orders = sorted(c.rng.sample(open_orders, k), key=lambda o: o.id)
    if len(orders) == 1:
        o = orders[0]
        cust = c.s.get(Customer, o.customer_id)
        prompt = c.say(f"{cust.name} changed their mind: cancel order #{o.id}.",
                       f"Please cancel order {o.id} (placed by {cust.name} on {o.placed_on}).",
                       f"Cancel order number {o.id}; the customer no longer wants it.")
    else:
        listed = " and ".join(f"#{o.id} ({c.s.get(Customer, o.customer_id).name})" for o in orders)
        prompt = c.say(f"Two customers changed their minds: cancel orders {listed}.",
                       f"Please cancel orders {listed}; neither customer wants their order any more.")
    return Draft("cancel-order", f"Cancel order{'s' if len(orders) > 1 else ''} "
                 + ", ".join(str(o.id) for o in orders), prompt,
                 [call("cancel_order", order_id=o.id) for o in orders], "write", difficulty="medium",
                 tags=["multi-entity"])


def place_order(c: Ctx) -> Draft:
    cust = c.pick(_customers(c))
    prods = c.rng.sample([p for p in c.s.scalars(select(Product).order_by(Product.id)) if p.active and p.stock >= 5], 2)
    qty = [c.rng.randint(1, 3), c.rng.randint(1, 2)]
    method = c.pick(["card", "paypal"])
    lines = " and ".join(f"{q} x {p.name}" for q, p in zip(qty, prods, strict=True))
    prompt = c.say(f"Place an order for {cust.name}: {lines}. They pay by {method} right away.",
                   f"{cust.name} (customer #{cust.id}) wants {lines}. Create the order and take payment via {method}.",
                   f"New order for customer {cust.id}: {lines}, paid with {method}.")
    return Draft("place-order", f"Place and pay an order for {cust.name}", prompt,
                 [call("create_order", customer_id=cust.id,
                       items=[{"product_id": p.id, "quantity": q} for q, p in zip(qty, prods, strict=True)]),
                  call("pay_order", order_id=int(c.s.scalar(select(Order.id).order_by(Order.id.desc())) or 0) + 1,
                       method=method)],
                 "write", difficulty="medium", tags=["multi-entity"])


def ship_customer_orders(c: Ctx) -> Draft:
    paid = _orders(c, "paid")
    by_cust: dict[int, list[Order]] = {}
    for o in paid:
        by_cust.setdefault(o.customer_id, []).append(o)
    cid = c.pick([k for k, v in by_cust.items() if len(v) >= 1])
    cust = c.s.get(Customer, cid)
    prompt = c.say(f"Ship every paid order of {cust.name}.", f"All of {cust.name}'s paid orders went out today; "
                   "mark them as shipped.", f"Mark each paid order belonging to customer #{cid} as shipped.")
    return Draft("ship-paid-orders", f"Ship {cust.name}'s paid orders", prompt,
                 [call("search_orders", customer_id=cid, status="paid")]
                 + [call("ship_order", order_id=o.id) for o in by_cust[cid]], "write", difficulty="medium")


def restock_low(c: Ctx) -> Draft:
    # The threshold and the level are both drawn: the low-stock products are much the same on every
    # database, so with the level alone a memorised call list fit one task in a dozen (issue #38).
    below = c.pick([6, 8, 10, 12, 15])
    level = c.pick(list(range(40, 125, 5)))
    low = [p for p in c.s.scalars(select(Product).order_by(Product.id)) if p.active and p.stock < below]
    prompt = c.say(f"Restock every active product that has fewer than {below} units in stock up to exactly {level} "
                   "units. Leave discontinued products alone.",
                   f"Inventory sweep: each active product below {below} units should be brought to {level} units in "
                   "stock (inactive products stay as they are).")
    return Draft("restock-low-stock", f"Restock products under {below} units to {level}", prompt,
                 [call("search_products", max_stock=below - 1, active=True, limit=100)]
                 + [call("update_product", product_id=p.id, stock=level) for p in low], "write",
                 difficulty="hard", tags=["long"])


def deliver_shipped(c: Ctx) -> Draft | None:
    shipped = _orders(c, "shipped")
    cut = c.pick([15, 16, 18])
    batch = shipped[:cut] if c.rng.random() < 0.5 else shipped[-cut:]
    if len(batch) < 15:
        return None
    ids = ", ".join(str(o.id) for o in batch)
    prompt = c.say(f"The carrier confirmed delivery of these orders: {ids}. Mark each one delivered.",
                   f"Mark orders {ids} as delivered; the courier's manifest confirms all of them.")
    return Draft("deliver-orders", f"Mark {len(batch)} orders delivered", prompt,
                 [call("mark_delivered", order_id=o.id) for o in batch], "write", difficulty="hard", tags=["long"])


def ask_refundable(c: Ctx) -> Draft:
    o = c.pick(_orders(c, "delivered", "shipped", "paid"))
    value = money(paid_cents(c.s, o.id) - refunded_cents(c.s, o.id))
    prompt = c.say(f"How much can still be refunded on order #{o.id}? Answer with the dollar amount.",
                   f"What is the remaining refundable amount for order {o.id}? Reply with just the amount.")
    return Draft("ask-refundable", f"Refundable amount on order {o.id}", prompt,
                 [call("get_order", order_id=o.id), call("submit_answer", answer=value)], "read",
                 answer=scalar(value))


def ask_orders_total(c: Ctx) -> Draft:
    # Not a count of orders (almost always 1 to 4, so a constant earns it): the sum of their totals.
    status = c.pick(["delivered", "paid", "shipped", "pending"])
    cust = c.s.get(Customer, c.pick(sorted({o.customer_id for o in _orders(c, status)})))
    total = sum(o.total_cents for o in _orders(c, status) if o.customer_id == cust.id)
    prompt = c.say(f"What do {cust.name}'s {status} orders add up to? Give the combined order total in dollars.",
                   f"Sum the order totals of every {status} order of customer {cust.name} and report the amount.",
                   f"Customer #{cust.id} ({cust.name}) asks how much their {status} orders come to in total.")
    return Draft("ask-orders-total", f"Total of {cust.name}'s {status} orders", prompt,
                 [call("search_orders", customer_id=cust.id, status=status, limit=100),
                  call("submit_answer", answer=money(total))], "read", answer=scalar(money(total)),
                 difficulty="medium")


def ask_category_stock(c: Ctx) -> Draft:
    cat = c.pick(CATEGORIES)
    active = c.rng.random() < 0.5
    prods = [p for p in c.s.scalars(select(Product).where(Product.category == cat).order_by(Product.id))
             if p.active or not active]
    if not prods:
        raise LookupError(f"no {cat} products")
    units = sum(p.stock for p in prods)
    scope = "active " if active else ""
    prompt = c.say(f"How many units do we hold in stock across all {scope}{cat} products combined?",
                   f"Add up the stock of every {scope}product in the {cat} category: how many units is that?")
    return Draft("ask-category-stock", f"Units in stock of {scope}{cat}", prompt,
                 [call("search_products", category=cat, **({"active": True} if active else {}), limit=100),
                  call("submit_answer", answer=str(units))], "read", answer=scalar(units), difficulty="medium")


def ask_buyer_email(c: Ctx) -> Draft:
    o = c.pick(_orders(c, *("pending", "paid", "shipped", "delivered")))
    cust = c.s.get(Customer, o.customer_id)
    prompt = c.say(f"What is the email address of the customer who placed order #{o.id}?",
                   f"Which email should we use to contact the buyer of order {o.id}?")
    return Draft("ask-buyer-email", f"Email of the buyer of order {o.id}", prompt,
                 [call("get_order", order_id=o.id), call("get_customer", customer_id=cust.id),
                  call("submit_answer", answer=cust.email)], "read", answer=scalar(cust.email))


def ask_out_of_stock(c: Ctx) -> Draft | None:
    cat = c.pick(CATEGORIES)
    threshold = c.rng.randint(3, 60)
    found = [p for p in c.s.scalars(select(Product).where(Product.category == cat).order_by(Product.id))
             if p.active and p.stock <= threshold]
    # Names, not SKUs: a product's SKU is a function of its id, and the low-stock ids repeat from
    # one database to the next.
    if not 2 <= len(found) <= 6:
        return None
    prompt = c.say(f"Which active {cat} products have {threshold} or fewer units in stock? List their names.",
                   f"Name every active product in the {cat} category with stock of at most {threshold} units.")
    return Draft("ask-low-stock", f"Low-stock {cat} products", prompt,
                 [call("search_products", category=cat, active=True, max_stock=threshold, limit=100),
                  call("submit_answer", answer=", ".join(p.name for p in found))], "read",
                 answer=items(*[[p.name] for p in found]), difficulty="medium")


def ask_top_item(c: Ctx) -> Draft:
    o = c.pick([o for o in _orders(c, "delivered", "paid", "shipped")
                if len({i.quantity * i.unit_price_cents for i in c.s.scalars(
                    select(OrderItem).where(OrderItem.order_id == o.id))}) > 1])
    lines = list(c.s.scalars(select(OrderItem).where(OrderItem.order_id == o.id)))
    top = max(lines, key=lambda i: i.quantity * i.unit_price_cents)
    p = c.s.get(Product, top.product_id)
    prompt = c.say(f"On order #{o.id}, which product accounts for the largest line total (quantity x unit price)? "
                   "Give its name.", f"Name the product with the most expensive line on order {o.id}.")
    return Draft("ask-top-line", f"Largest line of order {o.id}", prompt,
                 [call("get_order", order_id=o.id), call("get_product", product_id=p.id),
                  call("submit_answer", answer=p.name)], "read", answer=scalar(p.name, p.sku), difficulty="medium")


def refuse_over_refund(c: Ctx) -> Draft:
    o = c.pick(_orders(c, "delivered", "shipped"))
    avail = paid_cents(c.s, o.id) - refunded_cents(c.s, o.id)
    amount = avail + c.pick([1000, 5000, 12000])
    g = grounds("refund_over_paid", money(avail))
    prompt = c.say(f"The customer on order #{o.id} demands a refund of ${money(amount)}. Process it.",
                   f"Refund ${money(amount)} to the buyer of order {o.id} as a goodwill gesture.")
    return Draft("refuse-over-refund", f"Over-refund on order {o.id}", prompt,
                 [call("get_order", order_id=o.id),
                  refuse(g, f"order {o.id} has only ${money(avail)} refundable")], "refusal", grounds=g,
                 forbidden=[call("refund_order", order_id=o.id, amount=amount / 100, reason="goodwill")],
                 difficulty="medium", tags=["policy"])


def refuse_full_refund(c: Ctx) -> Draft:
    # An order already partly refunded: refunding its whole total again would exceed what is left.
    o = c.pick([o for o in _orders(c, "delivered", "shipped") if refunded_cents(c.s, o.id) > 0])
    avail = paid_cents(c.s, o.id) - refunded_cents(c.s, o.id)
    cust = c.s.get(Customer, o.customer_id)
    g = grounds("refund_over_paid", money(avail))
    prompt = c.say(f"{cust.name} wants their money back for order #{o.id}: refund the full order total of "
                   f"${money(o.total_cents)}.",
                   f"Refund all ${money(o.total_cents)} of order {o.id} to {cust.name}; they are returning everything.")
    return Draft("refuse-full-refund", f"Full refund of partly refunded order {o.id}", prompt,
                 [call("get_order", order_id=o.id),
                  refuse(g, f"order {o.id} was partly refunded already; only ${money(avail)} is left")],
                 "refusal", grounds=g,
                 forbidden=[call("refund_order", order_id=o.id, amount=o.total_cents / 100, reason="full return")],
                 difficulty="medium", tags=["policy", "multi-entity"])


def refuse_delete_customer(c: Ctx) -> Draft:
    cid = c.pick([o.customer_id for o in _orders(c, "delivered")])
    cust = c.s.get(Customer, cid)
    g = grounds("customer_has_orders", len(list(c.s.scalars(select(Order.id).where(Order.customer_id == cid)))))
    prompt = c.say(f"Delete the customer record of {cust.name}; they asked us to close the account.",
                   f"Remove customer #{cid} ({cust.name}) from the database.")
    return Draft("refuse-delete-customer", f"Delete {cust.name}", prompt,
                 [call("get_customer", customer_id=cid),
                  refuse(g, "customers with order history cannot be deleted")], "refusal", grounds=g,
                 forbidden=[call("delete_customer", customer_id=cid)], tags=["policy"])


def refuse_cancel_delivered(c: Ctx) -> Draft:
    o = c.pick(_orders(c, "delivered", "shipped"))
    g = grounds("order_not_cancellable", o.status)
    prompt = c.say(f"Cancel order #{o.id} please.", f"The buyer wants order {o.id} cancelled and the stock put back.")
    return Draft("refuse-cancel", f"Cancel {o.status} order {o.id}", prompt,
                 [call("get_order", order_id=o.id),
                  refuse(g, f"order {o.id} is already {o.status}")], "refusal", grounds=g,
                 forbidden=[call("cancel_order", order_id=o.id)], tags=["policy"])


#: Not drawn (issue #38; ask-order-count, almost always 1 to 4, became ask-orders-total):
#: `refuse_delete_customer` and `refuse_cancel_delivered`, whose figure (a
#: customer's order count, an order's status) takes a handful of values, so one constant states it
#: on most databases. They stay for the tasks written from them.
INTENTS = [update_email, refund_partial, ask_refundable, refuse_over_refund, place_order, restock_low, change_tier,
           ask_orders_total, cancel, refuse_full_refund, deliver_shipped, ask_buyer_email, reprice,
           ask_out_of_stock, ship_customer_orders, ask_category_stock, ask_top_item]
