"""The bank domain's tools, the rules a refusal may name, its policy and the `Domain` itself
(its tables and seed data are in `bank.py`)."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from envhub.errors import AgentError
from environments.db.core import LIMIT, Domain, P, Tool, add, answer_tools, get_or_404, listing, money, row_dict, search
from environments.db.domains.bank import (
    ACCOUNT_STATUS,
    KINDS,
    MAX_CARD_LIMIT,
    TODAY,
    Account,
    BankBase,
    Card,
    Customer,
    Loan,
    Transaction,
    seed,
)


def _account(s: Session, account_id: int) -> Account:
    return get_or_404(s, Account, account_id, "account")


def _open(a: Account) -> None:
    if a.status != "open":
        raise AgentError(f"account {a.number} is {a.status}; no transactions are allowed")


def _post(s: Session, a: Account, kind: str, amount: int, memo: str, other: int | None = None) -> None:
    add(s, Transaction(account_id=a.id, kind=kind, amount_cents=amount, memo=memo, posted_on=TODAY,
                       counterparty_id=other))


def _debit(s: Session, a: Account, amount: int, kind: str, memo: str, other: int | None = None) -> None:
    _open(a)
    if amount > a.balance_cents + a.overdraft_cents:
        raise AgentError(f"insufficient funds in {a.number}: available {money(a.balance_cents + a.overdraft_cents)}, "
                         f"requested {money(amount)}")
    a.balance_cents -= amount
    _post(s, a, kind, amount, memo, other)


def search_customers(s: Session, limit: int = 20, **f: object) -> dict:
    rows, total = search(s, Customer, f, text_cols=("name", "email", "city"), limit=limit)
    return listing(rows, total, "customers")


def get_customer(s: Session, customer_id: int) -> dict:
    c = get_or_404(s, Customer, customer_id, "customer")
    accts = s.scalars(select(Account).where(Account.customer_id == c.id).order_by(Account.id)).all()
    loans = s.scalars(select(Loan).where(Loan.customer_id == c.id).order_by(Loan.id)).all()
    return {**row_dict(c), "accounts": [row_dict(a) for a in accts], "loans": [row_dict(x) for x in loans]}


def update_customer(s: Session, customer_id: int, **changes: object) -> dict:
    c = get_or_404(s, Customer, customer_id, "customer")
    if not changes:
        raise AgentError("nothing to update: give at least one of email, phone, city")
    if "email" in changes and "@" not in str(changes["email"]):
        raise AgentError(f"invalid email address {changes['email']!r}")
    for k, v in changes.items():
        setattr(c, k, v)
    return row_dict(c)


def search_accounts(s: Session, limit: int = 20, **f: object) -> dict:
    rows, total = search(s, Account, f, limit=limit)
    return listing(rows, total, "accounts")


def get_account(s: Session, account_id: int) -> dict:
    a = _account(s, account_id)
    cards = s.scalars(select(Card).where(Card.account_id == a.id).order_by(Card.id)).all()
    return {**row_dict(a), "available": money(a.balance_cents + a.overdraft_cents) if a.status == "open" else "0.00",
            "cards": [row_dict(c) for c in cards]}


def list_transactions(s: Session, account_id: int, limit: int = 20, kind: str | None = None) -> dict:
    _account(s, account_id)
    rows, total = search(s, Transaction, {"account_id": account_id, **({"kind": kind} if kind else {})},
                         limit=limit)
    return listing(rows, total, "transactions")


def deposit(s: Session, account_id: int, amount: int, memo: str) -> dict:
    a = _account(s, account_id)
    _open(a)
    a.balance_cents += amount
    _post(s, a, "deposit", amount, memo)
    return get_account(s, a.id)


def withdraw(s: Session, account_id: int, amount: int, memo: str) -> dict:
    a = _account(s, account_id)
    _debit(s, a, amount, "withdrawal", memo)
    return get_account(s, a.id)


def transfer(s: Session, from_account_id: int, to_account_id: int, amount: int, memo: str) -> dict:
    if from_account_id == to_account_id:
        raise AgentError("cannot transfer from an account to itself")
    src, dst = _account(s, from_account_id), _account(s, to_account_id)
    owner = s.get(Customer, src.customer_id)
    if amount > 1_000_000 and owner is not None and not owner.kyc_verified:
        raise AgentError("transfers over 10000.00 need a KYC-verified customer")
    _open(dst)
    _debit(s, src, amount, "transfer_out", memo, dst.id)
    dst.balance_cents += amount
    _post(s, dst, "transfer_in", amount, memo, src.id)
    return {"from": get_account(s, src.id), "to": get_account(s, dst.id)}


def set_status(s: Session, account_id: int, status: str) -> dict:
    a = _account(s, account_id)
    if a.status == "closed":
        raise AgentError(f"account {a.number} is closed")
    if status == "frozen" and a.status == "frozen":
        raise AgentError(f"account {a.number} is already frozen")
    if status == "open" and a.status == "open":
        raise AgentError(f"account {a.number} is not frozen")
    a.status = status
    return row_dict(a)


def freeze_account(s: Session, account_id: int) -> dict:
    return set_status(s, account_id, "frozen")


def unfreeze_account(s: Session, account_id: int) -> dict:
    return set_status(s, account_id, "open")


def close_account(s: Session, account_id: int) -> dict:
    a = _account(s, account_id)
    if a.status == "closed":
        raise AgentError(f"account {a.number} is already closed")
    if a.balance_cents != 0:
        raise AgentError(f"account {a.number} has a balance of {money(a.balance_cents)}; it must be zero to close")
    for card in s.scalars(select(Card).where(Card.account_id == a.id)):
        card.status = "blocked"
    a.status = "closed"
    return row_dict(a)


def open_account(s: Session, customer_id: int, kind: str) -> dict:
    c = get_or_404(s, Customer, customer_id, "customer")
    if not c.kyc_verified:
        raise AgentError(f"customer {c.id} is not KYC-verified; accounts cannot be opened")
    n = len(s.scalars(select(Account).where(Account.customer_id == c.id, Account.kind == kind,
                                            Account.status != "closed")).all())
    if n:
        raise AgentError(f"customer {c.id} already has an open {kind} account")
    a = Account(customer_id=c.id, kind=kind, balance_cents=0, overdraft_cents=50_000 if kind == "checking" else 0,
                status="open", opened_on=TODAY, number="")
    add(s, a)
    a.number = f"ACC-{100000 + a.id * 37}"
    return row_dict(a)


def block_card(s: Session, card_id: int) -> dict:
    c = get_or_404(s, Card, card_id, "card")
    if c.status == "blocked":
        raise AgentError(f"card {c.id} is already blocked")
    c.status = "blocked"
    return row_dict(c)


def set_card_limit(s: Session, card_id: int, daily_limit: int) -> dict:
    c = get_or_404(s, Card, card_id, "card")
    if c.status != "active":
        raise AgentError(f"card {c.id} is {c.status}; its limit cannot be changed")
    if daily_limit > MAX_CARD_LIMIT:
        raise AgentError(f"daily limit cannot exceed {money(MAX_CARD_LIMIT)}")
    c.daily_limit_cents = daily_limit
    return row_dict(c)


def get_loan(s: Session, loan_id: int) -> dict:
    return row_dict(get_or_404(s, Loan, loan_id, "loan"))


def make_loan_payment(s: Session, loan_id: int, from_account_id: int, amount: int) -> dict:
    loan = get_or_404(s, Loan, loan_id, "loan")
    a = _account(s, from_account_id)
    if a.customer_id != loan.customer_id:
        raise AgentError(f"account {a.number} does not belong to the borrower of loan {loan.id}")
    if loan.status != "active":
        raise AgentError(f"loan {loan.id} is {loan.status}")
    if amount > loan.outstanding_cents:
        raise AgentError(f"payment of {money(amount)} exceeds the outstanding {money(loan.outstanding_cents)}")
    _debit(s, a, amount, "loan_payment", f"loan {loan.id}")
    loan.outstanding_cents -= amount
    if loan.outstanding_cents == 0:
        loan.status = "paid_off"
    return {"loan": row_dict(loan), "account": get_account(s, a.id)}


AID = P("integer", "Account id (not the account number).", minimum=1)
AMOUNT = P("money", "Amount in dollars.", minimum=0.01)
MEMO = P("string", "Memo shown on the statement.", max_len=200)

RULES = {
    "overdraft_limit": "the amount would take the account below its overdraft limit; figure: the funds available "
                       "(balance plus overdraft)",
    "account_not_open": "frozen and closed accounts accept no transactions; figure: the account's id",
    "balance_not_zero": "only zero-balance accounts can be closed; figure: the balance",
    "card_limit_cap": "card daily limits are at most 5000.00; figure: that cap",
    "loan_overpayment": "a payment would exceed what is outstanding; figure: the outstanding amount",
}

TOOLS = [
    Tool("search_customers", "Find customers by name, email or city (substring match).",
         {"name": P("string", required=False), "email": P("string", required=False),
          "city": P("string", required=False), "limit": LIMIT}, search_customers),
    Tool("get_customer", "A customer with their accounts and loans.",
         {"customer_id": P("integer", minimum=1)}, get_customer),
    Tool("update_customer", "Change a customer's contact details.",
         {"customer_id": P("integer", minimum=1), "email": P("string", required=False),
          "phone": P("string", required=False, max_len=40), "city": P("string", required=False, max_len=80)},
         update_customer, writes=True),
    Tool("search_accounts", "Find accounts by number, owner, kind or status.",
         {"number": P("string", required=False, max_len=20), "customer_id": P("integer", required=False, minimum=1),
          "kind": P("string", required=False, enum=KINDS), "status": P("string", required=False, enum=ACCOUNT_STATUS),
          "limit": LIMIT}, search_accounts),
    Tool("get_account", "An account with its cards and available funds.", {"account_id": AID}, get_account),
    Tool("list_transactions", "An account's transactions, oldest first.",
         {"account_id": AID, "kind": P("string", required=False, enum=(
             "deposit", "withdrawal", "fee", "transfer_in", "transfer_out", "loan_payment")), "limit": LIMIT},
         list_transactions),
    Tool("deposit", "Deposit money into an open account.", {"account_id": AID, "amount": AMOUNT, "memo": MEMO},
         deposit, writes=True),
    Tool("withdraw", "Withdraw money (within balance plus overdraft).",
         {"account_id": AID, "amount": AMOUNT, "memo": MEMO}, withdraw, writes=True),
    Tool("transfer", "Move money between two open accounts.",
         {"from_account_id": AID, "to_account_id": AID, "amount": AMOUNT, "memo": MEMO}, transfer, writes=True),
    Tool("freeze_account", "Freeze an open account (no transactions until unfrozen).", {"account_id": AID},
         freeze_account, writes=True),
    Tool("unfreeze_account", "Reopen a frozen account.", {"account_id": AID}, unfreeze_account, writes=True),
    Tool("close_account", "Close an account with a zero balance; blocks its cards.", {"account_id": AID},
         close_account, writes=True),
    Tool("open_account", "Open a new account for a KYC-verified customer.",
         {"customer_id": P("integer", minimum=1), "kind": P("string", enum=KINDS)}, open_account, writes=True),
    Tool("block_card", "Block a card.", {"card_id": P("integer", minimum=1)}, block_card, writes=True),
    Tool("set_card_limit", "Set an active card's daily spending limit (at most 5000.00).",
         {"card_id": P("integer", minimum=1), "daily_limit": P("money", minimum=0.01)}, set_card_limit, writes=True),
    Tool("get_loan", "One loan.", {"loan_id": P("integer", minimum=1)}, get_loan),
    Tool("make_loan_payment", "Pay towards a loan from one of the borrower's accounts.",
         {"loan_id": P("integer", minimum=1), "from_account_id": AID, "amount": AMOUNT}, make_loan_payment,
         writes=True),
    *answer_tools(RULES),
]

POLICY = ("Policy: no transaction may take an account below its overdraft limit; frozen and closed accounts accept "
          "no transactions; only zero-balance accounts can be closed; card daily limits are at most 5000.00; "
          "loan payments never exceed the outstanding amount.")

DOMAIN = Domain(name="bank", title="Retail banking", language="en", base=BankBase, seed=seed, tools=TOOLS,
                today=TODAY, policy=POLICY)
