import { describe, expect, it } from 'vitest';
import { IMAGE, ownTag } from '../../scripts/container.js';

// `node scripts/container.js` builds under a tag of its own each time: the container tests' IMAGE is theirs.
describe('scripts/container.js: the tag of a build outside the tests', () => {
  it('is never the tests’ tag, and differs by time and by process', () => {
    const now = new Date('2026-11-28T09:30:00.123Z');
    expect(ownTag(now, 4242)).toBe('localhost/gsup-local:build-20261128093000-4242');
    expect(ownTag(now, 4242)).not.toBe(IMAGE);
    expect(ownTag(now, 4243)).not.toBe(ownTag(now, 4242));
    expect(ownTag(new Date('2026-11-28T09:30:01Z'), 4242)).not.toBe(ownTag(now, 4242));
    expect(ownTag()).toMatch(/^localhost\/gsup-local:build-\d{14}-\d+$/);
  });
});
