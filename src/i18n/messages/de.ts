import type { en } from './en.ts';

export const de: Record<keyof typeof en, string> = {
  'layout.skip': 'Zum Inhalt springen',
  'layout.footer': 'Anmeldung bereitgestellt von {serviceName}',

  'login.title': 'Anmelden',
  'login.subtitle': 'um mit {clientName} fortzufahren',
  'login.intro': 'Geben Sie Ihre E-Mail-Adresse ein. Wir schicken Ihnen dann einen 6-stelligen Code für die Anmeldung.',
  'login.email.label': 'E-Mail-Adresse',
  'login.submit': 'Code zusenden',
  'login.error.invalid_email': 'Bitte geben Sie eine gültige E-Mail-Adresse ein.',
  'login.error.rate_limited': 'Zu viele Anfragen. Bitte versuchen Sie es in ein paar Minuten noch einmal.',

  'code.title': 'Prüfen Sie Ihr E-Mail-Postfach',
  'code.intro': 'Wir haben einen 6-stelligen Code an {email} geschickt. Er ist {minutes} Minuten lang gültig.',
  'code.label': '6-stelliger Code',
  'code.hint': 'Nichts angekommen? Sehen Sie auch im Spam-Ordner nach.',
  'code.submit': 'Anmelden',
  'code.change_email': 'Andere E-Mail-Adresse verwenden',
  'code.error.invalid': 'Dieser Code stimmt nicht. Bitte prüfen Sie ihn und versuchen Sie es erneut.',
  'code.error.expired': 'Dieser Code ist abgelaufen oder wurde zu oft falsch eingegeben. Bitte fordern Sie einen neuen an.',

  'consent.title': '{clientName} möchte auf Ihr Konto zugreifen',
  'consent.signed_in_as': 'Angemeldet als {email}',
  'consent.asks': 'Worauf {clientName} zugreifen möchte',
  'consent.scope.openid': 'Ihre Identität bestätigen',
  'consent.scope.profile': 'Ihr Name und Ihr Profil',
  'consent.scope.email': 'Ihre E-Mail-Adresse',
  'consent.scope.offline_access': 'Zugriff behalten, auch wenn Sie nicht angemeldet sind (bis Sie ihn in Ihrer Konsole widerrufen)',
  'consent.claims': 'Diese Angaben werden weitergegeben',
  'consent.client_site': 'Website: {host}',
  'consent.trust': 'Erlauben Sie den Zugriff nur, wenn Sie {clientName} vertrauen.',
  'consent.allow': 'Erlauben',
  'consent.deny': 'Ablehnen',

  'error.title': 'Etwas ist schiefgelaufen',
  'error.session_expired': 'Ihre Anmeldung hat zu lange gedauert. Kehren Sie zur Website zurück und beginnen Sie von vorn.',
  'error.not_found': 'Seite nicht gefunden',
  'error.status': 'Fehler {status}',

  'letter.subject': '{code} ist Ihr Anmeldecode für {serviceName}',
  'letter.title': 'Ihr Anmeldecode',
  'letter.intro': 'Geben Sie diesen Code ein, um sich bei {serviceName} anzumelden:',
  'letter.expires': 'Der Code läuft in {minutes} Minuten ab.',
  'letter.ignore': 'Falls Sie diesen Code nicht angefordert haben, können Sie diese E-Mail einfach ignorieren. Vermutlich hat sich jemand bei der Adresse vertippt.',
  'letter.never_share': 'Geben Sie diesen Code niemals weiter. {serviceName} wird Sie nie danach fragen.',
};
