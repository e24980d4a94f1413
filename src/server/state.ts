/**
 * What the server remembers per document: its text and version, and the last profile of each of its
 * pipelines with the model's analysis and plan. A profile is stale when the document's text differs
 * from the text it was taken on (an undo back to that text makes it fresh again).
 */
import type { Analysis, Plan } from '../shared/analysis';
import type { Profile } from '../shared/profile';
import type { ReportHistoryEntry } from '../shared/protocol';

/** The last profile of one pipeline and what the model made of it. */
export interface PipelineRecord {
  profile: Profile;
  analysis?: Analysis;
  plan?: Plan;
  /** The document text the profile was taken on. */
  text: string;
  at: string;
}

export interface DocumentRecord {
  uri: string;
  /** Absolute path (for file: URIs). */
  file: string;
  /** The editor's version number, or null for a file read from disk. */
  version: number | null;
  text: string;
  profiles: Map<string, PipelineRecord>;
  history: Map<string, ReportHistoryEntry[]>;
}

export class DocumentStore {
  private readonly docs = new Map<string, DocumentRecord>();

  get(uri: string): DocumentRecord | undefined {
    return this.docs.get(uri);
  }

  all(): DocumentRecord[] {
    return [...this.docs.values()];
  }

  /** Open or update a document; returns the names of pipelines whose staleness changed. */
  set(uri: string, file: string, version: number | null, text: string): string[] {
    const doc = this.docs.get(uri);
    if (!doc) {
      this.docs.set(uri, { uri, file, version, text, profiles: new Map(), history: new Map() });
      return [];
    }
    const changed: string[] = [];
    for (const [name, rec] of doc.profiles) {
      if ((rec.text === doc.text) !== (rec.text === text)) changed.push(name);
    }
    doc.version = version;
    doc.text = text;
    return changed;
  }

  /** Forget the text of a closed document but keep its profiles (they return when it reopens). */
  close(uri: string): void {
    const doc = this.docs.get(uri);
    if (doc) doc.version = null;
  }

  setProfile(uri: string, name: string, record: PipelineRecord, historyLabel: string): void {
    const doc = this.docs.get(uri);
    if (!doc) return;
    doc.profiles.set(name, record);
    if (!record.profile.error && record.analysis) {
      const h = doc.history.get(name) ?? [];
      h.push({ at: record.at, rate: record.analysis.measuredRate, bound: record.analysis.bound, predictedRate: record.plan?.predictedRate, label: historyLabel });
      if (h.length > 50) h.shift();
      doc.history.set(name, h);
    }
  }

  /** Forget profiles of one document (or all); returns the affected documents and pipelines. */
  clear(uri?: string): Array<{ uri: string; pipelines: string[] }> {
    const out: Array<{ uri: string; pipelines: string[] }> = [];
    for (const doc of this.docs.values()) {
      if (uri !== undefined && doc.uri !== uri) continue;
      const names = [...doc.profiles.keys()];
      doc.profiles.clear();
      doc.history.clear();
      if (names.length > 0) out.push({ uri: doc.uri, pipelines: names });
    }
    return out;
  }
}

/** True when the document changed since the profile was taken. */
export function isStale(doc: DocumentRecord, rec: PipelineRecord): boolean {
  return rec.text !== doc.text;
}
