import { memoryBroker, memoryTransport } from '@idemq/core';
import { describe, expect, it } from 'vitest';
import { CaseList } from '../src/collectedCases.js';
import { collectTransportCases, type TransportHarness } from '../src/index.js';
import { Suite } from '../src/suite.js';

const noEnv = () => ({ dispose: async () => {} });

describe('case selection', () => {
  it('registers only selected cases: an unselected one is neither a test nor an omission', () => {
    const list = new CaseList();
    const suite = new Suite({}, noEnv, 1_000, list, (id) => id !== 'C02' && id !== 'C04');
    suite.case('C01', 'kept', async () => {});
    suite.case('C02', 'left out', async () => {});
    suite.caseUnless('cannot apply', 'C03', 'omitted with its reason', async () => {});
    suite.caseUnless('cannot apply', 'C04', 'left out', async () => {});
    suite.omit('C04', 'left out as well');
    expect(list.cases.map((c) => c.id)).toEqual(['C01']);
    expect(list.omissions).toEqual([{ id: 'C03', name: 'C03 omitted: cannot apply' }]);
    expect(suite.omitted).toEqual([{ id: 'C03', reason: 'cannot apply' }]);
  });

  it('registers every case without a selection', () => {
    const list = new CaseList();
    const suite = new Suite({}, noEnv, 1_000, list);
    suite.case('C01', 'one', async () => {});
    suite.case('C02', 'two', async () => {});
    expect(list.cases.map((c) => c.id)).toEqual(['C01', 'C02']);
  });

  it("the transport suite honours the harness's cases", () => {
    const broker = memoryBroker();
    let sources = 0;
    const harness: TransportHarness = {
      name: 'memory',
      capabilities: memoryTransport({ broker }).capabilities,
      connect: async () => memoryTransport({ broker }),
      newSource: async () => `queue-${++sources}`,
      deadLetterOf: (source) => `${source}.dlq`,
    };
    const all = new Set(collectTransportCases(harness).map((c) => c.id));
    const selected = (id: string) => id === 'C11' || (id >= 'C17' && id <= 'C33');
    const ids = new Set(collectTransportCases({ ...harness, cases: selected }).map((c) => c.id));
    expect(ids.size).toBeGreaterThan(0);
    expect([...ids].filter((id) => !selected(id))).toEqual([]);
    expect([...all].filter(selected).sort()).toEqual([...ids].sort());
  });
});
