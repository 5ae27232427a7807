import { type Capabilities, memoryTransport } from '@idemq/core';
import { describe, expect, it } from 'vitest';
import type { TransportHarness } from '../src/index.js';
import { collectTransportRegistrations } from '../src/transport/runTransportConformance.js';

// Every registration of the transport suite either runs or shows as a skipped test named with
// its reason, whatever the capabilities: none is dropped silently.

const reference = memoryTransport().capabilities;

function harness(capabilities: Partial<Capabilities>, extra: Partial<TransportHarness> = {}) {
  return {
    name: 'registrations',
    capabilities: { ...reference, ...capabilities },
    connect: async () => memoryTransport(),
    newSource: async () => 'unused',
    deadLetterOf: (source: string) => `${source}.dlq`,
    ...extra,
  } satisfies TransportHarness;
}

/** Each capability that changes what is registered, away from the reference's value. */
const variants: Array<[string, TransportHarness]> = [
  ['memory', harness({})],
  ['memory, with a lease', harness({ leaseExtension: { maxTotalMs: 60_000 } }, { leaseMs: 300 })],
  ['connections can be cut', harness({}, { interruptConnections: () => undefined })],
  ["orderingScope 'none'", harness({ orderingScope: 'none' })],
  ['no consumer groups', harness({ consumerGroups: false })],
  ['publishDedup', harness({ publishDedup: { windowMs: 300_000 } })],
  [
    'no consumer groups, publishDedup (SQS FIFO)',
    harness({ consumerGroups: false, publishDedup: { windowMs: 300_000 } }),
  ],
];

function registrations(of: TransportHarness) {
  const list = collectTransportRegistrations(of);
  return {
    ran: list.cases.map((c) => c.id),
    omitted: list.omissions.map((o) => o.name),
    all: [...list.cases, ...list.omissions].map((r) => r.id).sort(),
  };
}

describe('transport suite registrations', () => {
  const everything = registrations(
    harness(
      { leaseExtension: { maxTotalMs: 60_000 } },
      { leaseMs: 300, interruptConnections: () => undefined },
    ),
  );

  it('a harness that can do everything runs every registration', () => {
    expect(everything.omitted).toEqual([]);
    expect(new Set(everything.all)).toEqual(
      new Set(Array.from({ length: 36 }, (_, i) => `C${String(i).padStart(2, '0')}`)),
    );
  });

  it.each(variants)('%s: every registration runs or is omitted with a reason', (_, variant) => {
    const { all, omitted } = registrations(variant);
    expect(all).toEqual(everything.all);
    for (const name of omitted) expect(name).toMatch(/^C\d\d omitted: \S/);
    expect(new Set(omitted).size, 'omissions named alike').toBe(omitted.length);
  });

  it('the memory harnesses omit six registrations without a lease, one with', () => {
    expect(
      registrations(harness({}))
        .omitted.map((name) => name.slice(0, 3))
        .sort(),
    ).toEqual(['C17', 'C19', 'C19', 'C20', 'C20', 'C24']);
    expect(registrations(variants[1]?.[1] ?? harness({})).omitted).toEqual([
      'C24 omitted: the harness gives no interruptConnections() to cut connections with',
    ]);
  });
});
