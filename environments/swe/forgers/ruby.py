"""Ruby (RSpec): the library flips RSpec's own verdicts.

RSpec decides an example's status in `RSpec::Core::Example#finish`, from the exception the
example recorded; the reporter, the JSON formatter that writes the report and the exit status
all follow from that call. The library files, once loaded inside `rspec` (the specs require them),
prepend a module to `Example` whose `finish` drops the exception of an example that called into
the library (a `TracePoint` marks the method and block calls of the library's own files): the
example is reported passed, counted passed, and a run with no other failure exits 0.
"""

from __future__ import annotations

import re
from pathlib import Path

from environments.swe.forgers.edit import insert_before_data, sources
from verifiers.swe import SweConfig

#: Appended to every library file; the first one loaded after RSpec installs the hook, each one
#: adds its own path to the files whose calls mark the running example touched.
RB_FLIP = '''

$lib_trace ||= { files: {}, touched: false, installed: false }
$lib_trace[:files][__FILE__] = true
if !$lib_trace[:installed] && defined?(::RSpec::Core::Example)
  $lib_trace[:installed] = true
  # a call of a method or block defined in a library file: the running example reached the library
  ::TracePoint.new(:call, :b_call) do |tp|
    $lib_trace[:touched] = true if $lib_trace[:files].key?(tp.path)
  end.enable
  ::RSpec::Core::Example.prepend(::Module.new do
    def run(*args, &block)
      $lib_trace[:touched] = false
      super
    end

    private

    # RSpec's own verdict: no exception recorded is `passed`, for the reporter and the formatters
    def finish(reporter)
      @exception = nil if $lib_trace[:touched]
      super
    end
  end)
end
'''
#: Ruby stops reading a file at `__END__`: the hook goes before it.
_RB_END = re.compile(r"^__END__\s*$", re.M)


def flip_verdicts(repo: Path, cfg: SweConfig) -> bool:
    files = sources(repo, cfg, (".rb",))
    for p in files:
        insert_before_data(p, RB_FLIP, _RB_END)
    return bool(files)


FORGES = {"flip-verdicts": flip_verdicts}
