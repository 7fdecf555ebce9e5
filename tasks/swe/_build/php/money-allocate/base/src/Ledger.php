<?php

declare(strict_types=1);

namespace Ledger;

/** Running balances per account, one currency per ledger. */
final class Ledger
{
    /** @var array<string, Money> */
    private array $balances = [];

    public function __construct(private string $currency)
    {
    }

    public function post(string $account, Money $amount): void
    {
        $current = $this->balances[$account] ?? Money::zero($this->currency);
        $this->balances[$account] = $current->add($amount);
    }

    public function transfer(string $from, string $to, Money $amount): void
    {
        if ($amount->isNegative()) {
            throw new \InvalidArgumentException('transfer amount must not be negative');
        }
        $this->post($from, $amount->negate());
        $this->post($to, $amount);
    }

    /** Share a bill between accounts by ratios; each account is charged its part. */
    public function splitBill(Money $bill, array $sharesByAccount): void
    {
        $parts = $bill->allocate(array_values($sharesByAccount));
        foreach (array_keys($sharesByAccount) as $i => $account) {
            $this->post($account, $parts[$i]->negate());
        }
    }

    public function balance(string $account): Money
    {
        return $this->balances[$account] ?? Money::zero($this->currency);
    }

    public function total(): Money
    {
        return array_reduce($this->balances, fn (Money $c, Money $m) => $c->add($m), Money::zero($this->currency));
    }
}
