use strict;
use warnings;
use Test::More;
use Config::Ini;

my $ini = Config::Ini->new;
$ini->set('db', 'user', 'admin');
$ini->set('db', 'note', ' padded ');
my $text = $ini->to_string;
is($text, qq{[db]\nuser = admin\nnote = " padded "\n}, 'serialises with quoting');

my $back = Config::Ini->new->read_string($text);
is($back->get('db', 'note'), ' padded ', 'round trip keeps the value');

$ini->set('db', 'url', 'x=1&y=2');
is(Config::Ini->new->read_string($ini->to_string)->get('db', 'url'), 'x=1&y=2', 'round trip of a value with =');

done_testing;
