<?php

declare(strict_types=1);

namespace Ledger;

final class CurrencyMismatch extends \DomainException
{
    public function __construct(Currency $a, Currency $b)
    {
        parent::__construct("currency mismatch: {$a->code()} vs {$b->code()}");
    }
}
