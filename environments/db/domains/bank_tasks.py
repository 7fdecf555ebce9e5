"""Task intents for the banking domain."""

from __future__ import annotations

from sqlalchemy import select

from environments.db.core import money
from environments.db.domains.bank import MAX_CARD_LIMIT, Account, Card, Customer, Loan, Transaction
from environments.db.intents import Ctx, Draft, call, grounds, items, listed, refuse, scalar


def _accounts(c: Ctx, status: str = "open", kind: str | None = None) -> list[Account]:
    q = select(Account).where(Account.status == status).order_by(Account.id)
    if kind:
        q = q.where(Account.kind == kind)
    return list(c.s.scalars(q))


def _owner(c: Ctx, a: Account) -> Customer:
    return c.s.get(Customer, a.customer_id)


def update_phone(c: Ctx) -> Draft:
    cust = c.pick(list(c.s.scalars(select(Customer).order_by(Customer.id))))
    phone = f"555-{c.rng.randint(100, 999)}-{c.rng.randint(1000, 9999)}"
    prompt = c.say(f"{cust.name} has a new phone number, {phone}. Update their profile.",
                   f"Please record {phone} as the phone number of customer {cust.name}.",
                   f"Customer #{cust.id} ({cust.name}) called to change their phone to {phone}.")
    return Draft("update-phone", f"Update {cust.name}'s phone", prompt,
                 [call("update_customer", customer_id=cust.id, phone=phone)], "write")


def do_deposit(c: Ctx) -> Draft:
    a = c.pick(_accounts(c))
    amount = c.rng.randint(20, 900) * 100 + c.pick([0, 50, 25])
    memo = c.pick(["cash deposit", "cheque deposit", "branch deposit"])
    prompt = c.say(f"Deposit ${money(amount)} into account {a.number} with the memo '{memo}'.",
                   f"{_owner(c, a).name} brought in ${money(amount)} ({memo}) for account {a.number}. Post it.")
    return Draft("deposit", f"Deposit into {a.number}", prompt,
                 [call("search_accounts", number=a.number),
                  call("deposit", account_id=a.id, amount=amount / 100, memo=memo)], "write")


def own_transfer(c: Ctx) -> Draft:
    pairs = []
    for a in _accounts(c, kind="checking"):
        for b in _accounts(c, kind="savings"):
            if b.customer_id == a.customer_id and a.balance_cents >= 20_000:
                pairs.append((a, b))
    a, b = c.pick(pairs)
    amount = min(a.balance_cents, c.rng.randint(100, 5000) * 100) // 100 * 100
    memo = "savings top-up"
    prompt = c.say(f"Move ${money(amount)} from {_owner(c, a).name}'s checking account to their savings account "
                   f"(memo: {memo}).",
                   f"Transfer ${money(amount)} from account {a.number} to account {b.number}, memo '{memo}'.")
    return Draft("own-transfer", f"Checking to savings for {_owner(c, a).name}", prompt,
                 [call("get_customer", customer_id=a.customer_id),
                  call("transfer", from_account_id=a.id, to_account_id=b.id, amount=amount / 100, memo=memo)],
                 "write", difficulty="medium", tags=["multi-entity"])


def loan_payment(c: Ctx) -> Draft | None:
    options = []
    for loan in c.s.scalars(select(Loan).where(Loan.status == "active").order_by(Loan.id)):
        for a in _accounts(c, kind="checking"):
            if a.customer_id == loan.customer_id and a.balance_cents >= 50_000:
                options.append((loan, a))
    loan, a = c.pick(options)
    amount = min(loan.outstanding_cents, c.pick([25_000, 40_000, 50_000]))
    cust = _owner(c, a)
    prompt = c.say(f"{cust.name} wants to pay ${money(amount)} towards loan #{loan.id} from their checking account.",
                   f"Apply a ${money(amount)} payment to loan {loan.id}, debiting {cust.name}'s account {a.number}.")
    return Draft("loan-payment", f"Loan payment on loan {loan.id}", prompt,
                 [call("get_loan", loan_id=loan.id),
                  call("make_loan_payment", loan_id=loan.id, from_account_id=a.id, amount=amount / 100)], "write",
                 difficulty="medium", tags=["multi-entity"])


def report_fraud(c: Ctx) -> Draft:
    # Two or three accounts flagged at once: one account's lockdown drew from the ~40 checking
    # accounts with active cards, the same ids on every database (issue #38).
    flagged = [a for a in _accounts(c, kind="checking")
               if any(card.status == "active" for card in c.s.scalars(select(Card).where(Card.account_id == a.id)))]
    k = c.pick([2, 3])
    if len(flagged) < k:
        raise LookupError("too few accounts with active cards")
    accounts = sorted(c.rng.sample(flagged, k), key=lambda a: a.id)
    numbers = listed([a.number for a in accounts])
    owners = "; ".join(f"{a.number} ({_owner(c, a).name})" for a in accounts)
    prompt = c.say(f"The fraud team traced one skimming device to accounts {numbers}. Freeze each account and block "
                   "every active card on it.",
                   f"Fraud alert for these accounts: {owners}. Block their active cards and freeze the accounts.")
    actions = []
    for a in accounts:
        cards = [card for card in c.s.scalars(select(Card).where(Card.account_id == a.id).order_by(Card.id))
                 if card.status == "active"]
        actions += [call("get_account", account_id=a.id)] + [call("block_card", card_id=card.id) for card in cards] \
            + [call("freeze_account", account_id=a.id)]
    return Draft("fraud-lockdown", f"Fraud lockdown of {k} accounts", prompt, actions, "write", difficulty="medium",
                 tags=["multi-entity"])


def card_limit(c: Ctx) -> Draft:
    card = c.pick(list(c.s.scalars(select(Card).where(Card.status == "active").order_by(Card.id))))
    # Any of 46 limits up to the cap ($500 to $5,000): with four, a memorised call fit one task in 200.
    new = c.pick([x for x in range(50_000, MAX_CARD_LIMIT + 1, 10_000) if x != card.daily_limit_cents])
    holder = _owner(c, c.s.get(Account, card.account_id)).name
    prompt = c.say(f"Set the daily limit of the card ending in {card.last4} (card id {card.id}) to ${money(new)}.",
                   f"Change card #{card.id}'s daily spending limit to ${money(new)} (cardholder {holder}).")
    return Draft("card-limit", f"Card {card.id} limit", prompt,
                 [call("set_card_limit", card_id=card.id, daily_limit=new / 100)], "write")


def unfreeze(c: Ctx) -> Draft:
    # Two or three accounts: a database has about nine frozen ones, so one memorised
    # `unfreeze_account` call fit one task in a hundred (issue #38).
    k = c.pick([2, 3])
    frozen = _accounts(c, status="frozen")
    if len(frozen) < k:
        raise LookupError("too few frozen accounts")
    accounts = sorted(c.rng.sample(frozen, k), key=lambda a: a.id)
    numbers = listed([a.number for a in accounts])
    owners = ", ".join(f"{a.number} ({_owner(c, a).name})" for a in accounts)
    prompt = c.say(f"The investigation on accounts {numbers} is over; unfreeze them.",
                   f"Reactivate these frozen accounts: {owners}.")
    return Draft("unfreeze", f"Unfreeze {k} accounts", prompt,
                 [a for acc in accounts for a in (call("search_accounts", number=acc.number),
                                                  call("unfreeze_account", account_id=acc.id))], "write",
                 tags=["multi-entity"])


def bonus_batch(c: Ctx) -> Draft | None:
    savings = _accounts(c, kind="savings")
    k = c.pick([15, 16, 17])
    chosen = sorted(c.rng.sample(savings, min(k, len(savings))), key=lambda a: a.id)
    if len(chosen) < 15:
        return None
    bonus = c.pick([500, 1000, 1500])
    nums = ", ".join(a.number for a in chosen)
    prompt = c.say(f"Pay the spring promotion bonus of ${money(bonus)} into each of these savings accounts, memo "
                   f"'spring bonus': {nums}.",
                   f"Credit ${money(bonus)} (memo: spring bonus) to every one of the following accounts: {nums}.")
    return Draft("bonus-batch", f"Promotion bonus to {len(chosen)} accounts", prompt,
                 [call("deposit", account_id=a.id, amount=bonus / 100, memo="spring bonus") for a in chosen], "write",
                 difficulty="hard", tags=["long"])


def ask_balance(c: Ctx) -> Draft:
    a = c.pick(_accounts(c))
    value = money(a.balance_cents)
    prompt = c.say(f"What is the current balance of account {a.number}?",
                   f"Look up the balance on account {a.number} and report it.")
    return Draft("ask-balance", f"Balance of {a.number}", prompt,
                 [call("search_accounts", number=a.number), call("submit_answer", answer=value)], "read",
                 answer=scalar(value))


def ask_total(c: Ctx) -> Draft:
    cust = c.pick([x for x in c.s.scalars(select(Customer).order_by(Customer.id))
                   if len(list(c.s.scalars(select(Account).where(Account.customer_id == x.id)))) > 1])
    total = sum(a.balance_cents for a in c.s.scalars(select(Account).where(Account.customer_id == cust.id)))
    prompt = c.say(f"What is the combined balance of all accounts held by {cust.name}?",
                   f"Add up the balances of every account belonging to {cust.name} and report the total.")
    return Draft("ask-total-balance", f"Total balance of {cust.name}", prompt,
                 [call("get_customer", customer_id=cust.id), call("submit_answer", answer=money(total))], "read",
                 answer=scalar(money(total)), difficulty="medium")


def ask_frozen(c: Ctx) -> Draft | None:
    frozen = _accounts(c, status="frozen")
    if not frozen:
        return None
    prompt = c.say("Which accounts are currently frozen? List their account numbers.",
                   "Give me the numbers of all frozen accounts.")
    return Draft("ask-frozen", "List frozen accounts", prompt,
                 [call("search_accounts", status="frozen", limit=100),
                  call("submit_answer", answer=", ".join(a.number for a in frozen))], "read",
                 answer=items(*[[a.number] for a in frozen]), difficulty="medium")


def ask_fees(c: Ctx) -> Draft | None:
    a = c.pick([a for a in _accounts(c) if c.s.scalars(select(Transaction).where(
        Transaction.account_id == a.id, Transaction.kind == "fee")).first()])
    fees = list(c.s.scalars(select(Transaction).where(Transaction.account_id == a.id, Transaction.kind == "fee")))
    total = sum(t.amount_cents for t in fees)
    prompt = c.say(f"How much in fees has account {a.number} been charged in total?",
                   f"Sum up all fee transactions on account {a.number}.")
    return Draft("ask-fees", f"Fees on {a.number}", prompt,
                 [call("list_transactions", account_id=a.id, kind="fee", limit=100),
                  call("submit_answer", answer=money(total))], "read", answer=scalar(money(total)),
                 difficulty="medium")


def refuse_overdraw(c: Ctx) -> Draft:
    a = c.pick([a for a in _accounts(c) if a.balance_cents < 2_000_000])
    b = c.pick([x for x in _accounts(c) if x.id != a.id])
    amount = a.balance_cents + a.overdraft_cents + c.pick([10_000, 100_000, 500_000])
    g = grounds("overdraft_limit", money(a.balance_cents + a.overdraft_cents))
    prompt = c.say(f"Transfer ${money(amount)} from account {a.number} to account {b.number}.",
                   f"Send ${money(amount)} from {a.number} to {b.number} today; memo 'invoice'.")
    return Draft("refuse-overdraw", f"Overdrawing transfer from {a.number}", prompt,
                 [call("get_account", account_id=a.id), refuse(g, "insufficient funds")], "refusal", grounds=g,
                 forbidden=[call("transfer", from_account_id=a.id, to_account_id=b.id, amount=amount / 100,
                                 memo="invoice")], difficulty="medium", tags=["policy"])


def refuse_close(c: Ctx) -> Draft:
    a = c.pick([a for a in _accounts(c) if a.balance_cents > 0])
    g = grounds("balance_not_zero", money(a.balance_cents))
    prompt = c.say(f"Close account {a.number} for {_owner(c, a).name}.",
                   f"{_owner(c, a).name} asked us to shut down account {a.number} today.")
    return Draft("refuse-close", f"Close {a.number} with a balance", prompt,
                 [call("get_account", account_id=a.id), refuse(g, "balance is not zero")], "refusal", grounds=g,
                 forbidden=[call("close_account", account_id=a.id)], tags=["policy"])


def refuse_card_limit(c: Ctx) -> Draft:
    card = c.pick(list(c.s.scalars(select(Card).where(Card.status == "active").order_by(Card.id))))
    new = c.pick([600_000, 750_000, 1_000_000])
    g = grounds("card_limit_cap", "5000.00")
    prompt = c.say(f"Raise the daily limit of card #{card.id} to ${money(new)}.",
                   f"The owner of card {card.id} wants a ${money(new)} daily limit. Set it.")
    return Draft("refuse-card-limit", f"Card {card.id} limit over the maximum", prompt,
                 [call("get_account", account_id=card.account_id),
                  refuse(g, "daily limits are capped at 5000.00")], "refusal", grounds=g,
                 forbidden=[call("set_card_limit", card_id=card.id, daily_limit=new / 100)], tags=["policy"])


def refuse_frozen_withdraw(c: Ctx) -> Draft:
    a = c.pick(_accounts(c, status="frozen"))
    g = grounds("account_not_open", a.id)
    amount = c.rng.randint(4, 60) * 2500
    prompt = c.say(f"Withdraw ${money(amount)} in cash from account {a.number}.",
                   f"Customer wants ${money(amount)} out of account {a.number} at the counter.")
    return Draft("refuse-frozen-withdrawal", f"Withdraw from frozen {a.number}", prompt,
                 [call("search_accounts", number=a.number), refuse(g, "the account is frozen")],
                 "refusal", grounds=g, forbidden=[call("withdraw", account_id=a.id, amount=amount / 100, memo="cash")],
                 tags=["policy"])


def ask_loan_outstanding(c: Ctx) -> Draft:
    loan = c.pick(list(c.s.scalars(select(Loan).where(Loan.status == "active").order_by(Loan.id))))
    cust = c.s.get(Customer, loan.customer_id)
    value = money(loan.outstanding_cents)
    prompt = c.say(f"How much does {cust.name} still owe on their loan?",
                   f"{cust.name} (customer #{cust.id}) asks for the outstanding balance of their loan. What is it?",
                   f"What is left to repay on {cust.name}'s loan?")
    return Draft("ask-loan-outstanding", f"Outstanding loan of {cust.name}", prompt,
                 [call("get_customer", customer_id=cust.id), call("submit_answer", answer=value)], "read",
                 answer=scalar(value))


def ask_deposits(c: Ctx) -> Draft:
    a = c.pick([a for a in _accounts(c) if c.s.scalars(select(Transaction).where(
        Transaction.account_id == a.id, Transaction.kind == "deposit")).first()])
    total = sum(t.amount_cents for t in c.s.scalars(select(Transaction).where(
        Transaction.account_id == a.id, Transaction.kind == "deposit")))
    prompt = c.say(f"What is the total of all deposits posted to account {a.number}?",
                   f"Add up every deposit on account {a.number} and give me the sum.")
    return Draft("ask-deposits", f"Deposits into {a.number}", prompt,
                 [call("search_accounts", number=a.number),
                  call("list_transactions", account_id=a.id, kind="deposit", limit=100),
                  call("submit_answer", answer=money(total))], "read", answer=scalar(money(total)),
                 difficulty="medium")


def refuse_loan_overpay(c: Ctx) -> Draft:
    options = []
    for loan in c.s.scalars(select(Loan).where(Loan.status == "active").order_by(Loan.id)):
        for a in _accounts(c):
            if a.customer_id == loan.customer_id:
                options.append((loan, a))
    loan, a = c.pick(options)
    amount = (loan.outstanding_cents // 100 + c.pick([100, 500, 2500])) * 100
    cust = _owner(c, a)
    g = grounds("loan_overpayment", money(loan.outstanding_cents))
    prompt = c.say(f"{cust.name} wants to pay off loan #{loan.id} with ${money(amount)} from account {a.number}.",
                   f"Apply a ${money(amount)} payment to loan {loan.id}, debiting {cust.name}'s account {a.number}.")
    return Draft("refuse-loan-overpayment", f"Overpayment of loan {loan.id}", prompt,
                 [call("get_loan", loan_id=loan.id), refuse(g, "the payment exceeds what is outstanding")],
                 "refusal", grounds=g,
                 forbidden=[call("make_loan_payment", loan_id=loan.id, from_account_id=a.id, amount=amount / 100)],
                 difficulty="medium", tags=["policy", "multi-entity"])


#: Not drawn (issue #38): `refuse_card_limit`, whose figure is the cap itself (one constant states
#: it on every database), and `refuse_frozen_withdraw`, whose figure (an account id among the few
#: dozen of a database) repeats from one database to the next. They stay for the tasks written
#: from them.
INTENTS = [update_phone, do_deposit, ask_balance, refuse_overdraw, own_transfer, bonus_batch, loan_payment,
           ask_total, refuse_close, report_fraud, ask_frozen, card_limit, refuse_loan_overpay, unfreeze, ask_fees,
           ask_loan_outstanding, ask_deposits]
