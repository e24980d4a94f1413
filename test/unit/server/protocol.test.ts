import * as assert from 'node:assert/strict';
import { NotificationType, RequestType } from 'vscode-jsonrpc';
import * as protocol from '../../../src/shared/protocol';

describe('The plumber/* protocol constants', () => {
  it('keep the method names other editors (Neovim, plain LSP clients) already send', () => {
    const methods = Object.entries(protocol)
      .filter(([, v]) => v instanceof RequestType || v instanceof NotificationType)
      .map(([name, v]) => [name, (v as { method: string }).method]);
    assert.deepEqual(Object.fromEntries(methods), {
      PipelinesRequest: 'plumber/pipelines',
      ProfileRequest: 'plumber/profile',
      ReportRequest: 'plumber/report',
      FixAllRequest: 'plumber/fixAll',
      ClearProfileRequest: 'plumber/clearProfile',
      ProfileUpdatedNotification: 'plumber/profileUpdated',
      TrustChangedNotification: 'plumber/trustChanged',
    });
  });

  it('declare requests as requests and notifications as notifications', () => {
    assert.ok(protocol.ProfileRequest instanceof RequestType);
    assert.ok(protocol.ProfileUpdatedNotification instanceof NotificationType);
    assert.ok(!(protocol.TrustChangedNotification instanceof RequestType));
  });
});
