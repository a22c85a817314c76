/** What the notification letter's view tests share: a letter's input, and its links as a reader sees them. */
import type { NotificationLetterInput } from '../../views/letters/notification.ts';

export const base: NotificationLetterInput = {
  locale: 'en',
  serviceName: 'Acme ID',
  siteName: 'Shop',
  siteHost: 'shop.example',
  clientId: 'shop',
  issuerHost: 'id.example',
  category: 'transactional',
  title: 'Your order 1234 has shipped',
  body: 'Hello Ann,\nyour parcel left our warehouse.\n\nTrack it on shop.example.com or call 10.0.0.1.',
  url: 'https://shop.example/orders/1234',
  unsubscribeUrl: 'https://id.example/unsubscribe/tok.sig',
  consoleUrl: 'https://id.example/console',
};

/** The letter's anchors: each href as written in the HTML, and its text. */
export function anchors(doc: string): { href: string | undefined; text: string }[] {
  return [...doc.matchAll(/<a\b([^>]*)>([\s\S]*?)<\/a>/gi)].map((m) => ({
    href: (m[1] ?? '').match(/\shref="([^"]*)"/)?.[1],
    text: m[2] ?? '',
  }));
}
